/**
 * The era bridge: a real v2 client pinned to 2026-07-28 in front of a real v1 SDK server (which
 * speaks 2025-11-25), over an HTTP backend and over a stdio one. Moat keeps one backend session
 * per principal, answers server/discover from the server's initialize result, adds resultType,
 * answers the methods 2026-07-28 removed, and maps the `_meta` log level.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import type { BackendSpec } from '../../../src/proxy/types.js';
import {
  startV1StatelessBackend,
  startV1StreamableBackend,
  type HttpBackendServer,
} from '../../support/mcp-http-backends.js';
import { memoryLogger, messagesOf, post, streamReader, testConfig } from '../../support/proxy-harness.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { WATCHED_URI } from '../../fixtures/conformance/server.js';
import { httpFixture, type HttpFixture } from '../../fixtures/conformance/spawn.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import type { AuditEvent } from '../../../src/audit/event.js';
import { startRedisReplicas, type ProxyProcess, type RedisReplicas } from '../../support/proxy-processes.js';

const MODERN = '2026-07-28';
const envelope = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra,
});

function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

/** Requests the backend got, apart from Moat's one-time era probe (`server/discover`). */
const forwarded = (backend: HttpBackendServer) =>
  backend.seen.filter((r) => r.headers['mcp-method'] !== 'server/discover').length;

async function modernClient(url: string): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'modern', version: '1' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(new TransportV2(new URL(url)));
  return client;
}

describe('era bridge: 2026-07-28 client, 2025-11-25 HTTP server', () => {
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  let endpoint: string;
  beforeAll(async () => {
    backend = await startV1StreamableBackend();
    const spec: BackendSpec = { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false };
    proxy = await startProxy(testConfig({ tools_filter: ['echo', 'add', 'progress', 'confirm'] }), spec, {
      logger: memoryLogger().logger,
    });
    endpoint = `${proxy.url}/mcp`;
  });
  afterAll(async () => {
    await proxy.close();
    await backend.close();
  });

  it('serves a v2 client pinned to 2026-07-28 on one backend session Moat initialized', async () => {
    const client = await modernClient(endpoint);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['add', 'confirm', 'echo', 'progress']);
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    await client.callTool({ name: 'echo', arguments: { text: 'again' } });
    await client.close();
    // The 2025 server saw 2025-11-25 requests on the one session Moat opened for this principal.
    expect(backend.sessionIds).toHaveLength(1);
    const calls = backend.seen.filter(
      (r) => r.method === 'POST' && r.headers['mcp-session-id'] !== undefined,
    );
    expect(calls.length).toBeGreaterThan(2);
    expect(calls.every((r) => r.headers['mcp-protocol-version'] === '2025-11-25')).toBe(true);
    expect(calls.every((r) => r.headers['mcp-session-id'] === backend.sessionIds[0])).toBe(true);
  });

  it('answers server/discover from the server initialize result', async () => {
    const res = await post(
      endpoint,
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } },
      modernHeaders('server/discover'),
    );
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: 1,
      result: {
        resultType: 'complete',
        supportedVersions: [MODERN],
        capabilities: { tools: {}, logging: {} },
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'v1-streamable' } },
      },
    });
  });

  it('adds resultType and the caching fields, and keeps the tool filter', async () => {
    const list = await post(
      endpoint,
      { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: envelope() } },
      { ...modernHeaders('tools/list'), accept: 'application/json' },
    );
    expect(list.json).toMatchObject({
      id: 'l',
      result: { resultType: 'complete', ttlMs: 0, cacheScope: 'private' },
    });
    const names = (list.json as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (t) => t.name,
    );
    expect(names).not.toContain('secret');
    const call = await post(
      endpoint,
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x' }, _meta: envelope() },
      },
      { ...modernHeaders('tools/call', 'echo'), accept: 'application/json' },
    );
    expect(call.json).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'x' }],
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'v1-streamable', version: '1.0.0' } },
      },
    });
  });

  it.each(['ping', 'logging/setLevel', 'resources/subscribe', 'initialize', 'unknown/method'])(
    'answers %s, not a 2026-07-28 method, with 404 and method-not-found',
    async (method) => {
      const before = forwarded(backend);
      const res = await post(
        endpoint,
        { jsonrpc: '2.0', id: 3, method, params: { _meta: envelope() } },
        modernHeaders(method),
      );
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({ id: 3, error: { code: -32601 } });
      expect(forwarded(backend)).toBe(before);
    },
  );

  it.each([
    ['no _meta envelope', undefined, MODERN, 400, -32602],
    ['no clientCapabilities', { 'io.modelcontextprotocol/protocolVersion': MODERN }, MODERN, 400, -32602],
    [
      'a _meta version other than the header',
      envelope({ 'io.modelcontextprotocol/protocolVersion': '2025-11-25' }),
      MODERN,
      400,
      -32020,
    ],
    [
      'another revision in _meta',
      envelope({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }),
      '2099-01-01',
      400,
      -32022,
    ],
  ])('refuses a request with %s like a 2026-07-28 server', async (_what, meta, header, status, code) => {
    const before = forwarded(backend);
    const res = await post(
      endpoint,
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: meta === undefined ? {} : { _meta: meta } },
      { ...modernHeaders('tools/list'), 'mcp-protocol-version': header },
    );
    expect(res.status).toBe(status);
    expect(res.json).toMatchObject({ id: 4, error: { code } });
    expect(forwarded(backend)).toBe(before);
  });

  it('refuses a server request for input the client did not declare with -32021', async () => {
    const res = await post(
      endpoint,
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'confirm', arguments: { question: 'ok?' }, _meta: envelope() },
      },
      { ...modernHeaders('tools/call', 'confirm'), accept: 'application/json' },
    );
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      id: 5,
      error: { code: -32021, data: { requiredCapabilities: { elicitation: {} } } },
    });
  });

  it('delivers log messages only to a request that asked for a level in _meta', async () => {
    const call = (id: number, meta: Record<string, unknown>) =>
      post(
        endpoint,
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: 'progress',
            arguments: { tag: 't' },
            _meta: envelope({ progressToken: `p${id}`, ...meta }),
          },
        },
        modernHeaders('tools/call', 'progress'),
      );
    const quiet = messagesOf(await call(1, {})) as Array<{ method?: string; id?: number }>;
    expect(quiet.map((m) => m.method ?? 'answer')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'answer',
    ]);
    const asked = messagesOf(await call(2, { 'io.modelcontextprotocol/logLevel': 'info' })) as Array<{
      method?: string;
      params?: { data?: unknown };
      result?: unknown;
    }>;
    expect(asked.find((m) => m.method === 'notifications/message')?.params?.data).toBe('log:t');
    expect(asked.at(-1)?.result).toMatchObject({ resultType: 'complete', content: [{ text: 'done:t' }] });
    const levels = backend.seen.filter((r) => r.method === 'POST').length;
    expect(levels).toBeGreaterThan(0);
  });

  it('opens a new backend session when the server forgot the old one (404)', async () => {
    const before = backend.sessionIds.length;
    await backend.dropSessions?.();
    const client = await modernClient(endpoint);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'back' } });
    expect(result.content).toEqual([{ type: 'text', text: 'back' }]);
    await client.close();
    expect(backend.sessionIds.length).toBe(before + 1);
  });
});

/** Reads an SSE response: `until(done)` waits (bounded) until the messages so far satisfy `done`. */
describe('era bridge: 2026-07-28 client, 2025-11-25 stdio server', () => {
  let moat: MoatUnderTest;
  let endpoint: string;
  beforeAll(async () => {
    moat = await moatInFrontOf('stdio');
    endpoint = `${moat.proxy.url}/mcp`;
  });
  afterAll(async () => {
    await moat?.stop();
  });

  const call = (id: number, name: string, args: Record<string, unknown> = {}) =>
    post(
      endpoint,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: envelope() } },
      { ...modernHeaders('tools/call', name), accept: 'application/json' },
    );

  it('serves a v2 client pinned to 2026-07-28', async () => {
    const client = await modernClient(endpoint);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('moat_echo');
    const result = await client.callTool({ name: 'moat_echo', arguments: { text: 'stdio' } });
    expect(result.content).toEqual([{ type: 'text', text: 'stdio' }]);
    await client.close();
  });

  it('adds resultType, answers server/discover and the removed methods', async () => {
    expect((await call(1, 'moat_echo', { text: 'r' })).json).toMatchObject({
      id: 1,
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'r' }],
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'moat-conformance-fixture' } },
      },
    });
    const discover = await post(
      endpoint,
      { jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: envelope() } },
      modernHeaders('server/discover'),
    );
    expect(discover.json).toMatchObject({
      id: 2,
      result: {
        resultType: 'complete',
        supportedVersions: [MODERN],
        capabilities: { resources: { subscribe: true }, logging: {} },
      },
    });
    const ping = await post(
      endpoint,
      { jsonrpc: '2.0', id: 3, method: 'ping', params: { _meta: envelope() } },
      modernHeaders('ping'),
    );
    expect(ping.status).toBe(404);
    expect(ping.json).toMatchObject({ id: 3, error: { code: -32601 } });
  });
});

describe.each(['stdio', 'http'] as const)('era bridge: subscriptions/listen, %s server', (kind) => {
  let moat: MoatUnderTest;
  let fixture: HttpFixture | undefined;
  let endpoint: string;
  beforeAll(async () => {
    if (kind === 'http') fixture = await httpFixture();
    moat = await moatInFrontOf(
      fixture ? { kind: 'http', url: fixture.url, transport: 'streamable-http', remote: false } : 'stdio',
    );
    endpoint = `${moat.proxy.url}/mcp`;
  });
  afterAll(async () => {
    await moat?.stop();
    await fixture?.stop();
  });

  const call = (id: number, name: string) =>
    post(
      endpoint,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: envelope() } },
      { ...modernHeaders('tools/call', name), accept: 'application/json' },
    );

  it('maps listen onto resources/subscribe and the server notifications, filtered and stamped', async () => {
    const controller = new AbortController();
    const listen = await fetch(endpoint, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...modernHeaders('subscriptions/listen'),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'sub-1',
        method: 'subscriptions/listen',
        params: {
          notifications: { toolsListChanged: true, resourceSubscriptions: [WATCHED_URI] },
          _meta: envelope(),
        },
      }),
    });
    expect(listen.headers.get('content-type')).toMatch(/^text\/event-stream/);
    try {
      const stream = streamReader(listen);
      const [ack] = await stream.until((m) => m.length >= 1);
      expect(ack).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          notifications: { toolsListChanged: true, resourceSubscriptions: [WATCHED_URI] },
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' },
        },
      });
      // The subscription reached the server before the acknowledgement's stream carries anything.
      let touched = '';
      for (let i = 0; i < 50 && touched !== 'notified'; i++) {
        const res = (await call(10 + i, 'moat_touch_watched_resource')).json as {
          result: { content: Array<{ text: string }> };
        };
        touched = res.result.content[0]?.text ?? '';
        if (touched !== 'notified') await new Promise((r) => setTimeout(r, 50));
      }
      expect(touched).toBe('notified');
      await call(99, 'moat_notify_list_changed');
      // Both notifications, whichever comes first (over stdio their order varies under load).
      const messages = await stream.until(
        (m) =>
          m.some((n) => n.method === 'notifications/tools/list_changed') &&
          m.some((n) => n.method === 'notifications/resources/updated'),
      );
      const methods = messages.map((m) => m.method);
      expect(methods).toContain('notifications/resources/updated');
      expect(methods).not.toContain('notifications/prompts/list_changed');
      for (const message of messages) {
        expect(message).toMatchObject({
          params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } },
        });
      }
    } finally {
      controller.abort();
    }
  });
});

describe('era bridge: principals (OIDC), policies and audit', () => {
  let idp: TestOidcProvider;
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  let dir: string;
  let auditFile: string;
  beforeAll(async () => {
    idp = await startTestOidcProvider([
      { id: 'alice', name: 'Alice', groups: ['admins'] },
      { id: 'bob', name: 'Bob' },
    ]);
    dir = await mkdtemp(join(tmpdir(), 'moat-era-bridge-'));
    auditFile = join(dir, 'audit.log');
    backend = await startV1StreamableBackend();
    const config = testConfig({
      oidc_config: oidcConfigFor(idp),
      authz_config: {
        version: '1.0',
        type: 'cedarv1',
        cedar: {
          policies: [
            'permit(principal, action == Action::"call_tool", resource == Tool::"echo");',
            'permit(principal in MoatGroup::"admins", action, resource);',
          ],
        },
      },
      audit_config: { component: 'bridge', logFile: auditFile },
    });
    proxy = await startProxy(
      config,
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy?.close();
    await backend?.close();
    await idp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives each principal its own backend session, and every policy sees each request once', async () => {
    const tokens = { alice: await idp.token('alice'), bob: await idp.token('bob') };
    const call = (who: 'alice' | 'bob', id: number, name: string, args: Record<string, unknown>) =>
      post(
        `${proxy.url}/mcp`,
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: envelope() } },
        {
          ...modernHeaders('tools/call', name),
          accept: 'application/json',
          authorization: `Bearer ${tokens[who]}`,
        },
      );
    expect((await call('alice', 1, 'echo', { text: 'a' })).json).toMatchObject({
      result: { resultType: 'complete' },
    });
    expect((await call('bob', 2, 'echo', { text: 'b' })).json).toMatchObject({
      result: { resultType: 'complete' },
    });
    expect((await call('alice', 3, 'add', { a: 1, b: 2 })).json).toMatchObject({
      result: { content: [{ text: '3' }] },
    });
    const refused = await call('bob', 4, 'add', { a: 1, b: 2 });
    expect(refused.status).toBe(403);

    // Two principals, two backend sessions; each principal's calls stayed on its own.
    expect(backend.sessionIds).toHaveLength(2);
    const callsBySession = new Map<string, number>();
    for (const seen of backend.seen) {
      const sid = seen.headers['mcp-session-id'];
      if (typeof sid === 'string') callsBySession.set(sid, (callsBySession.get(sid) ?? 0) + 1);
    }
    expect([...callsBySession.keys()].sort()).toEqual([...backend.sessionIds].sort());

    // Authorization and audit saw every bridged call once, as the client sent it.
    let events: AuditEvent[] = [];
    for (let i = 0; i < 100 && events.length < 4; i++) {
      const text = await readFile(auditFile, 'utf8').catch(() => '');
      events = text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditEvent)
        .filter((e) => e.type === 'mcp_tool_call');
      if (events.length < 4) await new Promise((r) => setTimeout(r, 50));
    }
    expect(events.map((e) => [e.subjects.user_id, e.target.name, e.outcome])).toEqual([
      ['alice', 'echo', 'success'],
      ['bob', 'echo', 'success'],
      ['alice', 'add', 'success'],
      ['bob', 'add', 'denied'],
    ]);
  });
});

describe('era bridge: two proxy processes sharing one Redis', () => {
  let backend: HttpBackendServer;
  let pair: RedisReplicas | undefined;
  let replicas: ProxyProcess[] = [];
  beforeAll(async () => {
    backend = await startV1StreamableBackend();
    pair = await startRedisReplicas(backend.url);
    replicas = [pair.a, pair.b];
  }, 60_000);
  afterAll(async () => {
    await pair?.stop();
    await backend?.close();
  });

  it('uses the one backend session of a principal from every replica', async () => {
    const texts: string[] = [];
    for (const [i, replica] of [replicas[0], replicas[1], replicas[0], replicas[1]].entries()) {
      const res = await post(
        `${replica?.url}/mcp`,
        {
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: `r${i}` }, _meta: envelope() },
        },
        { ...modernHeaders('tools/call', 'echo'), accept: 'application/json' },
      );
      texts.push(
        (res.json as { result: { content: Array<{ text: string }> } }).result.content[0]?.text ?? '',
      );
    }
    expect(texts).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(backend.sessionIds).toHaveLength(1);
    const sessionHeaders = new Set(
      backend.seen.map((r) => r.headers['mcp-session-id']).filter((sid) => sid !== undefined),
    );
    expect([...sessionHeaders]).toEqual(backend.sessionIds);
  });
});

describe('era bridge: 2026-07-28 client, stateless 2025-11-25 HTTP server', () => {
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  beforeAll(async () => {
    backend = await startV1StatelessBackend();
    proxy = await startProxy(
      testConfig(),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy?.close();
    await backend?.close();
  });

  it('bridges without a backend session when the server mints none', async () => {
    const client = await modernClient(`${proxy.url}/mcp`);
    const result = await client.callTool({ name: 'add', arguments: { a: 4, b: 5 } });
    expect(result.content).toEqual([{ type: 'text', text: '9' }]);
    await client.close();
    expect(backend.seen.every((r) => r.headers['mcp-session-id'] === undefined)).toBe(true);
    expect(
      backend.seen.filter((r) => r.headers['mcp-protocol-version'] === '2025-11-25').length,
    ).toBeGreaterThan(0);
  });
});
