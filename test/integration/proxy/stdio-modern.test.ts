/**
 * Moat over stdio in front of a 2026-07-28 server (the 2026-era fixture, the real v2 SDK's
 * dual-era `serveStdio`), shared by two OIDC users (a real oidc-provider):
 * - Moat probes `server/discover` first and never initializes the server, so it stays in its
 *   2026 mode; 2026 requests pass through as sent (the server's own `resultType`, rounds, state);
 * - the server's own `requestState` reaches the client sealed by Moat for that user and request:
 *   the other user's replay, a changed bit and a second use are refused (400, -32602) and audited;
 * - two users' `subscriptions/listen` streams on the server's one stdout each get their own
 *   stamps, and a stream that ended gets nothing more;
 * - a 2025-era client (the real v1 SDK client) is served in the other direction: initialize from
 *   discover, the server's input rounds as server→client requests, list changes through Moat's
 *   own listen; also in front of a 2026-only stdio server (`legacy: 'reject'`, which refuses
 *   `initialize` itself), over streamable HTTP and the legacy HTTP+SSE transport.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { FIXTURE_2026_MAIN } from '../../fixtures/conformance/spawn.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { accept, MODERN, sendModern } from '../../support/mrtr-client.js';
import { streamReader } from '../../support/proxy-harness.js';
import { testTempDir } from '../../support/temp-dir.js';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
let idp: TestOidcProvider;
let moat: MoatUnderTest;
let endpoint: string;
const tokens: Record<string, string> = {};
const auditFile = join(testTempDir('moat-stdio-modern-'), 'audit.log');

beforeAll(async () => {
  idp = await startTestOidcProvider([{ id: 'alice' }, { id: 'bob' }]);
  tokens.alice = await idp.token('alice');
  tokens.bob = await idp.token('bob');
  moat = await moatInFrontOf(
    'stdio',
    {
      oidc_config: oidcConfigFor(idp),
      audit_config: { component: 'stdio-modern', logFile: auditFile },
    },
    // 2026-only: a dual-era server accepts Moat's first message, initialize, and is served 2025.
    { fixtureMain: FIXTURE_2026_MAIN, fixtureMode: 'stdio-modern-only' },
  );
  endpoint = moat.proxy.endpoint;
});
afterAll(async () => {
  await moat?.stop();
  await idp?.close();
});

const call = (user: string, params: Record<string, unknown>) =>
  sendModern(endpoint, 'tools/call', { arguments: {}, ...params }, { token: tokens[user] });

const MULTI_ROUND = 'test_input_required_result_multi_round';

async function deniedEvents(count: number): Promise<Array<Record<string, unknown>>> {
  // Audit lines are written after the answer; wait (bounded) until the expected ones are there.
  for (let i = 0; i < 100; i++) {
    const text = await readFile(auditFile, 'utf8').catch(() => '');
    const denied = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.outcome === 'denied');
    if (denied.length >= count) return denied;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [];
}

function flipOneByte(state: string): string {
  const raw = Buffer.from(state.slice(3), 'base64url');
  const at = Math.floor(raw.length / 2);
  raw[at] = (raw[at] as number) ^ 0x01;
  return `m1.${raw.toString('base64url')}`;
}

describe('Moat over stdio in front of a 2026-07-28 server, two users', () => {
  it('passes 2026 requests through: the server’s own resultType and rounds, its state sealed by Moat', async () => {
    const listed = await sendModern(endpoint, 'tools/list', {}, { token: tokens.alice });
    expect(listed.status).toBe(200);
    // A 2025-pinned (bridged) server would have lost its 2026 tools' input keys; resultType is the server's.
    expect(listed.answer.result?.resultType).toBe('complete');

    const r1 = await call('alice', { name: MULTI_ROUND });
    expect(r1.answer.result?.resultType).toBe('input_required');
    const state1 = r1.answer.result?.requestState ?? '';
    expect(state1.startsWith('m1.')).toBe(true);
    const r2 = await call('alice', {
      name: MULTI_ROUND,
      inputResponses: { step1: accept({ name: 'Flo' }) },
      requestState: state1,
    });
    expect(Object.keys(r2.answer.result?.inputRequests ?? {})).toEqual(['step2']);
    const done = await call('alice', {
      name: MULTI_ROUND,
      inputResponses: { step2: accept({ color: 'green' }) },
      requestState: r2.answer.result?.requestState,
    });
    expect(done.answer.result?.content).toEqual([
      { type: 'text', text: 'Both rounds answered: Flo likes green.' },
    ]);
  });

  it('refuses the other user’s state, a changed one and a second use; each is audited', async () => {
    const r1 = await call('alice', { name: MULTI_ROUND });
    const state = r1.answer.result?.requestState ?? '';
    const retry = (user: string, requestState: string) =>
      call(user, { name: MULTI_ROUND, inputResponses: { step1: accept({ name: 'Eve' }) }, requestState });

    const stolen = await retry('bob', state);
    expect([stolen.status, stolen.answer.error?.code, stolen.answer.error?.data?.reason]).toEqual([
      400,
      -32602,
      'other-principal',
    ]);
    const tampered = await retry('alice', flipOneByte(state));
    expect([tampered.status, tampered.answer.error?.data?.reason]).toEqual([400, 'tampered']);
    // The owner's retry still works (refused retries did not use it up), once.
    const own = await retry('alice', state);
    expect(Object.keys(own.answer.result?.inputRequests ?? {})).toEqual(['step2']);
    const again = await retry('alice', state);
    expect([again.status, again.answer.error?.data?.reason]).toEqual([400, 'replayed']);
    // The server's raw state (what it would accept) never reached a client: a state Moat did not seal is refused.
    const forged = await retry('bob', 'not-a-moat-state');
    expect([forged.status, forged.answer.error?.data?.reason]).toEqual([400, 'malformed']);

    const denied = await deniedEvents(4);
    const byStateCheck = denied.filter((e) => JSON.stringify(e).includes('"denied_by":"request-state"'));
    expect(byStateCheck.length).toBeGreaterThanOrEqual(4);
  });

  it('routes each user’s listen stream by its own stamp; an ended stream gets nothing more', async () => {
    const open = async (user: string, id: string) => {
      const controller = new AbortController();
      const response = await fetch(endpoint, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${tokens[user]}`,
          'mcp-protocol-version': MODERN,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: {
            // The same id for both users: only Moat's own upstream ids tell them apart.
            notifications: user === 'alice' ? { toolsListChanged: true } : { promptsListChanged: true },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      return { controller, stream: streamReader(response) };
    };
    const alice = await open('alice', 'same');
    const bob = await open('bob', 'same');
    try {
      const [aliceAck] = await alice.stream.until((m) => m.length >= 1);
      const [bobAck] = await bob.stream.until((m) => m.length >= 1);
      expect(aliceAck).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID]: 'same' } },
      });
      expect(bobAck).toMatchObject({ params: { notifications: { promptsListChanged: true } } });

      await call('bob', { name: 'test_trigger_tool_change' });
      await call('bob', { name: 'test_trigger_prompt_change' });
      const aliceGot = await alice.stream.until((m) => m.length >= 2);
      const bobGot = await bob.stream.until((m) => m.length >= 2);
      expect(aliceGot[1]).toMatchObject({
        method: 'notifications/tools/list_changed',
        params: { _meta: { [SUBSCRIPTION_ID]: 'same' } },
      });
      expect(bobGot[1]).toMatchObject({ method: 'notifications/prompts/list_changed' });

      // Alice's stream ends; Bob's change reaches Bob only (and nothing breaks upstream).
      alice.controller.abort();
      await call('bob', { name: 'test_trigger_prompt_change' });
      const bobLater = await bob.stream.until((m) => m.length >= 3);
      expect(bobLater.map((m) => m.method)).toEqual([
        'notifications/subscriptions/acknowledged',
        'notifications/prompts/list_changed',
        'notifications/prompts/list_changed',
      ]);
    } finally {
      alice.controller.abort();
      bob.controller.abort();
    }
  });

  it('serves a 2025-era client in the other direction: initialize from discover, rounds as server requests', async () => {
    await legacyClientSession(endpoint, tokens.alice);
  });
});

describe('Moat over stdio in front of a dual-era server (the SDK’s serveStdio, legacy: serve)', () => {
  let dual: MoatUnderTest;
  beforeAll(async () => {
    dual = await moatInFrontOf('stdio', {}, { fixtureMain: FIXTURE_2026_MAIN });
  });
  afterAll(async () => {
    await dual?.stop();
  });

  it('serves 2025-era sessions natively (it accepts initialize), and 2026-07-28 clients natively on a second process', async () => {
    await legacyClientSession(dual.proxy.endpoint);
    expect(dual.fixture?.children).toHaveLength(1);
    const listed = await sendModern(dual.proxy.endpoint, 'tools/list', {});
    expect(listed.answer.result?.resultType).toBe('complete');
    // The second process was opened with server/discover; the first keeps its 2025 sessions.
    expect(dual.fixture?.children).toHaveLength(2);
    const asked = await sendModern(dual.proxy.endpoint, 'tools/call', {
      name: 'test_input_required_result_elicitation',
      arguments: {},
    });
    // The server's own input request key (the bridge names a 2025 elicitation `elicitation-1`).
    expect(Object.keys(asked.answer.result?.inputRequests ?? {})).toEqual(['user_name']);
    await legacyClientSession(dual.proxy.endpoint);
    expect(dual.fixture?.children).toHaveLength(2);
  });
});

describe('Moat over stdio in front of a 2026-only server (legacy: reject)', () => {
  let modernOnly: MoatUnderTest;
  beforeAll(async () => {
    modernOnly = await moatInFrontOf(
      'stdio',
      {},
      { fixtureMain: FIXTURE_2026_MAIN, fixtureMode: 'stdio-modern-only' },
    );
  });
  afterAll(async () => {
    await modernOnly?.stop();
  });

  it('a 2025-era client gets a session, its tools and their input rounds', async () => {
    await legacyClientSession(modernOnly.proxy.endpoint);
  });

  it('a 2025-era client over the legacy HTTP+SSE transport (--proxy-mode sse) is served too', async () => {
    const sse = await moatInFrontOf(
      'stdio',
      { proxy_mode: 'sse' },
      { fixtureMain: FIXTURE_2026_MAIN, fixtureMode: 'stdio-modern-only' },
    );
    try {
      await legacyClientSession(sse.proxy.endpoint, undefined, 'sse');
    } finally {
      await sse.stop();
    }
  });

  it('a 2026-07-28 client passes through', async () => {
    const listed = await sendModern(modernOnly.proxy.endpoint, 'tools/list', {});
    expect(listed.answer.result?.resultType).toBe('complete');
  });
});

/**
 * A real v1 client: connects, lists tools (no resultType), answers an input round, pings, and
 * hears of a tools list change.
 */
async function legacyClientSession(
  url: string,
  token?: string,
  transport: 'streamable-http' | 'sse' = 'streamable-http',
): Promise<void> {
  const client = new Client({ name: 'legacy', version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Ada' } }));
  const requestInit = { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } };
  await client.connect(
    transport === 'sse'
      ? new SSEClientTransport(new URL(url), { requestInit })
      : new StreamableHTTPClientTransport(new URL(url), { requestInit }),
  );
  try {
    expect(client.getServerVersion()?.name).toBe('moat-conformance-fixture-2026');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('test_elicitation');
    expect(tools).not.toHaveProperty('resultType');
    const elicited = await client.callTool({
      name: 'test_input_required_result_elicitation',
      arguments: {},
    });
    expect(JSON.stringify(elicited.content)).toContain('Ada');
    await client.ping();
    // List changes reach the client's stream through Moat's own listen at the server. The client
    // opens that stream on its own schedule, so the change is announced until one arrives (bounded).
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    for (let i = 0; i < 40 && changes === 0; i++) {
      await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(changes).toBeGreaterThan(0);
  } finally {
    await client.close();
  }
}
