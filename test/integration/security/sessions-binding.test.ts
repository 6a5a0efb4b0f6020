/**
 * Sessions belong to the principal that created them (issuer + subject of a real oidc-provider
 * token), in the memory store and in a real Redis: another user's session id is answered exactly
 * like an unknown one, a store that fails is a 503, and two users whose JSON-RPC ids collide on
 * one stdio server each get only their own answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { startV2StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { INIT_BODY, memoryLogger, messageOfAnswer, post, testConfig } from '../../support/proxy-harness.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

let idp: TestOidcProvider;
let redis: RedisServer;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  idp = await startTestOidcProvider([{ id: 'alice' }, { id: 'bob' }]);
  redis = await startRedis();
  tokens.alice = await idp.token('alice');
  tokens.bob = await idp.token('bob');
});
afterAll(async () => {
  await redis?.stop();
  await idp?.close();
});

const oidc = (): Partial<RunConfigInput> => ({
  oidc_config: oidcConfigFor(idp),
});

const as = (user: string, sessionId?: string): Record<string, string> => ({
  authorization: `Bearer ${tokens[user]}`,
  'mcp-protocol-version': '2025-11-25',
  ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
});

const messageOf = (text: string) => messageOfAnswer(text);

async function initialize(url: string, user: string): Promise<string> {
  const res = await post(url, INIT_BODY, as(user));
  expect(res.status).toBe(200);
  const id = res.headers.get('mcp-session-id');
  expect(id).toBeTruthy();
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, as(user, id!));
  return id!;
}

function echo(id: number, text: string, delayMs: number) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'moat_echo', arguments: { text, delay_ms: delayMs } },
  };
}

for (const store of ['memory', 'redis'] as const) {
  describe(`stdio backend, ${store} session store`, () => {
    let moat: MoatUnderTest;
    let url: string;
    beforeAll(async () => {
      moat = await moatInFrontOf('stdio', {
        ...oidc(),
        ...(store === 'redis'
          ? {
              scaling_config: {
                session_redis: { address: redis.address, key_prefix: `bind-${Date.now()}:` },
              },
            }
          : {}),
      });
      url = `${moat.proxy.url}/mcp`;
    });
    afterAll(async () => {
      await moat?.stop();
    });

    it("answers another user's session exactly like an unknown one", async () => {
      const aliceSession = await initialize(url, 'alice');
      const ping = { jsonrpc: '2.0', id: 5, method: 'ping' };
      const own = await post(url, ping, as('alice', aliceSession));
      expect(own.status).toBe(200);
      const stolen = await post(url, ping, as('bob', aliceSession));
      const unknown = await post(url, ping, as('bob', '00000000-0000-4000-8000-000000000000'));
      expect(stolen.status).toBe(404);
      expect(stolen.text).toBe(unknown.text);
      expect(unknown.status).toBe(404);
      // Bob's attempt did not end Alice's session.
      expect((await post(url, ping, as('alice', aliceSession))).status).toBe(200);
      // Nor can Bob close it.
      const del = await fetch(url, { method: 'DELETE', headers: as('bob', aliceSession) });
      expect(del.status).toBe(404);
      expect((await post(url, ping, as('alice', aliceSession))).status).toBe(200);
    });

    it('never hands one user the answer to the other when their JSON-RPC ids collide', async () => {
      const sessions = { alice: await initialize(url, 'alice'), bob: await initialize(url, 'bob') };
      const calls: Array<Promise<void>> = [];
      for (let i = 0; i < 15; i++) {
        for (const user of ['alice', 'bob'] as const) {
          const text = `${user}-${i}`;
          // Same id for both users, and answers that come back out of order.
          const delay = user === 'alice' ? 60 - i * 4 : i * 4;
          calls.push(
            post(url, echo(i, text, delay), as(user, sessions[user])).then((res) => {
              expect(res.status).toBe(200);
              const answer = messageOf(res.text);
              expect(answer.id).toBe(i);
              expect(JSON.stringify(answer.result)).toContain(`"${text}"`);
              expect(JSON.stringify(answer.result)).not.toContain(user === 'alice' ? '"bob-' : '"alice-');
            }),
          );
        }
      }
      await Promise.all(calls);
      expect(moat.fixture?.children).toHaveLength(1);
    });
  });
}

describe('HTTP backend', () => {
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  beforeAll(async () => {
    backend = await startV2StreamableBackend();
    proxy = await startProxy(
      testConfig(oidc()),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy?.close();
    await backend?.close();
  });

  it("refuses another user's session with the unknown-session 404", async () => {
    const url = `${proxy.url}/mcp`;
    const aliceSession = await initialize(url, 'alice');
    const ping = { jsonrpc: '2.0', id: 9, method: 'ping' };
    expect((await post(url, ping, as('alice', aliceSession))).status).toBe(200);
    const stolen = await post(url, ping, as('bob', aliceSession));
    const unknown = await post(url, ping, as('bob', 'no-such-session'));
    expect(stolen.status).toBe(404);
    expect(stolen.text).toBe(unknown.text);
  });
});

describe('a failing Redis session store', () => {
  it('answers 503, never a false "Session not found"', async () => {
    const own = await startRedis();
    const moat = await moatInFrontOf('stdio', {
      ...oidc(),
      scaling_config: { session_redis: { address: own.address } },
    });
    try {
      const url = `${moat.proxy.url}/mcp`;
      const session = await initialize(url, 'alice');
      await own.stop();
      const res = await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, as('alice', session));
      expect(res.status).toBe(503);
      expect(messageOf(res.text).error?.code).toBeDefined();
    } finally {
      await moat.stop();
      await own.stop();
    }
  });
});

describe('Redis session store creation', () => {
  it('is set-if-absent: a second create of one id fails and keeps the first owner', async () => {
    const { RedisSessionStore } = await import('../../../src/proxy/sessions/redis.js');
    const store = await RedisSessionStore.connect(
      { address: redis.address, key_prefix: `nx-${Date.now()}:` },
      { ttlMs: 60_000, logger: memoryLogger().logger },
    );
    try {
      const now = Date.now();
      const record = { id: 's', createdAt: now, lastAccess: now, metadata: {} };
      await store.create({ ...record, principal: 'alice' });
      await expect(store.create({ ...record, principal: 'mallory' })).rejects.toThrow(/already in use/);
      expect(await store.get('s')).toMatchObject({ principal: 'alice' });
    } finally {
      await store.close();
    }
  });
});
