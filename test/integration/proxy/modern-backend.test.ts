/**
 * A 2025-11-25 client (the real v1 SDK `Client`) in front of a 2026-07-28-only server (the real v2
 * SDK, `createMcpHandler` with `legacy: 'reject'`: no initialize, no sessions, no GET stream).
 * The proxy answers `initialize` from `server/discover`, keeps the session, sends each request
 * with the session's `_meta` envelope and the 2026 headers, turns an `input_required` round into an
 * elicitation request to the client, and `resources/subscribe` into `subscriptions/listen`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { MemorySessionStore } from '../../../src/proxy/sessions/memory.js';
import { startModernOnlyBackend, WATCHED, type ModernBackend } from '../../support/modern-backends.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

const MODERN = '2026-07-28';
const META = 'io.modelcontextprotocol/';

let backend: ModernBackend;
let proxy: RunningProxy;
let sessions: MemorySessionStore;
const clients: ClientV1[] = [];

beforeAll(async () => {
  backend = await startModernOnlyBackend();
  sessions = new MemorySessionStore({ ttlMs: 60_000 });
  proxy = await startProxy(
    testConfig(),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger, sessions },
  );
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});
afterAll(async () => {
  await proxy?.close();
  await backend?.close();
  await sessions?.close();
});

async function connect(capabilities: Record<string, unknown> = {}) {
  const client = new ClientV1({ name: 'old-client', version: '1.2.3' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`));
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const bodiesOf = (method: string) => backend.bodies.filter((b) => b.method === method);
const metaOf = (body: Record<string, unknown>) => (body.params as { _meta: Record<string, unknown> })._meta;

describe('a 2025-11-25 client in front of a 2026-07-28-only server', () => {
  it('gets initialize from server/discover, a session, and plain 2025 answers', async () => {
    const { client, transport } = await connect();
    expect(client.getServerVersion()).toEqual({ name: 'modern-only', version: '3.0.0' });
    expect(client.getInstructions()).toBe('Be brief.');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(transport.sessionId).toMatch(/^m-[0-9a-f-]{36}$/);
    expect(await sessions.get(transport.sessionId ?? '')).toMatchObject({ protocolVersion: '2025-11-25' });

    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['confirm', 'echo', 'route']);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'héllo' } });
    expect(result.content).toEqual([{ type: 'text', text: 'héllo' }]);
    expect(result).not.toHaveProperty('resultType');
    await client.ping();

    // The backend saw the client's initialize once, and refused it (the era decision's test);
    // never a ping or a session; every other request was a 2026 one.
    expect(bodiesOf('initialize')).toHaveLength(1);
    expect(bodiesOf('ping')).toEqual([]);
    expect(backend.seen.every((r) => r.headers['mcp-session-id'] === undefined)).toBe(true);
    expect(backend.seen.filter((r) => r.headers['mcp-protocol-version'] !== MODERN)).toHaveLength(1);
    const call = backend.seen.find((r) => r.headers['mcp-method'] === 'tools/call');
    expect(call?.headers['mcp-name']).toBe('echo');
    const [echo] = bodiesOf('tools/call');
    expect(metaOf(echo!)).toMatchObject({
      [`${META}protocolVersion`]: MODERN,
      [`${META}clientInfo`]: { name: 'old-client', version: '1.2.3' },
      [`${META}clientCapabilities`]: {},
    });
  });

  it('turns an input_required round into an elicitation request and retries with the answer', async () => {
    const { client } = await connect({ elicitation: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { answer: 'yes' } };
    });
    const before = bodiesOf('tools/call').length;
    const result = await client.callTool({ name: 'confirm', arguments: { question: 'Deploy?' } });
    expect(asked).toEqual(['Deploy?']);
    // The backend's opaque requestState came back unchanged with the client's answer.
    expect(result.content).toEqual([{ type: 'text', text: 'asked:Deploy?:yes' }]);
    const [first, retry] = bodiesOf('tools/call').slice(before);
    expect(first?.params).not.toHaveProperty('inputResponses');
    expect(retry?.params).toMatchObject({
      requestState: 'asked:Deploy?',
      inputResponses: { ask: { action: 'accept', content: { answer: 'yes' } } },
    });
  });

  it('declares no input kind for a client that has none, so the server cannot ask', async () => {
    const { client } = await connect();
    await expect(client.callTool({ name: 'confirm', arguments: { question: 'Deploy?' } })).rejects.toThrow(
      /elicitation/,
    );
    const last = bodiesOf('tools/call').at(-1)!;
    expect(metaOf(last)[`${META}clientCapabilities`]).toEqual({});
  });

  it('sends logging/setLevel as the log level of later requests', async () => {
    const { client } = await connect();
    await client.setLoggingLevel('warning');
    expect(bodiesOf('logging/setLevel')).toEqual([]);
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    expect(metaOf(bodiesOf('tools/call').at(-1)!)[`${META}logLevel`]).toBe('warning');
  });

  it('delivers resources/subscribe notifications on the session GET stream', async () => {
    const { client } = await connect();
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await client.subscribeResource({ uri: WATCHED });
    expect(bodiesOf('resources/subscribe')).toEqual([]);
    // The listen stream opens asynchronously: notify until the update arrives (bounded).
    for (let i = 0; i < 50 && updates.length === 0; i++) {
      backend.resourceUpdated(WATCHED);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(updates[0]).toBe(WATCHED);
    const watching = bodiesOf('subscriptions/listen').filter((b) =>
      (
        b.params as { notifications: { resourceSubscriptions: string[] } }
      ).notifications.resourceSubscriptions.includes(WATCHED),
    );
    expect(watching.length).toBeGreaterThan(0);
  });

  it('adds the Mcp-Param-* headers a tool declares, which the 2026 server requires', async () => {
    const { client } = await connect();
    await client.listTools();
    const result = await client.callTool({ name: 'route', arguments: { region: 'été' } });
    expect(result.content).toEqual([{ type: 'text', text: 'routed:été' }]);
    const call = backend.seen.filter((r) => r.headers['mcp-name'] === 'route').at(-1);
    expect(call?.headers['mcp-param-region']).toBe(`=?base64?${Buffer.from('été').toString('base64')}?=`);
    // Without it, the server refuses the call.
    const direct = await fetch(backend.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'route',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: bodiesOf('tools/call').at(-1)?.params,
      }),
    });
    expect(direct.status).toBe(400);
  });

  it('ends a request the client cancels while it waits for the client', async () => {
    const { transport } = await connect({ elicitation: {} });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': transport.sessionId ?? '',
    };
    const call = { name: 'confirm', arguments: { question: 'Wait?' } };
    const response = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: call }),
    });
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('elicitation/create')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before the question: ${seen}`);
      seen += Buffer.from(value).toString('utf8');
    }
    const cancel = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'slow-1' },
      }),
    });
    expect(cancel.status).toBe(202);
    // The stream ends without an answer (the upstream timeout is minutes away).
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += Buffer.from(value).toString('utf8');
    }
    expect(rest).not.toContain('slow-1');
  });

  it('ends the session on DELETE', async () => {
    const { transport } = await connect();
    const id = transport.sessionId ?? '';
    expect(await sessions.get(id)).toBeDefined();
    await transport.terminateSession();
    expect(await sessions.get(id)).toBeUndefined();
  });
});

describe('sessions in Redis, shared by two proxies', () => {
  let redis: RedisServer;
  const proxies: RunningProxy[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    for (let i = 0; i < 2; i++) {
      proxies.push(
        await startProxy(
          testConfig({ scaling_config: { session_redis: { address: redis.address } } }),
          { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
          { logger: memoryLogger().logger },
        ),
      );
    }
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await redis?.stop();
  });

  it('serves a session minted by one replica on the other', async () => {
    const client = new ClientV1({ name: 'old-client', version: '1.2.3' });
    const first = new StreamableHTTPClientTransport(new URL(`${proxies[0]!.url}/mcp`));
    await client.connect(first);
    clients.push(client);
    await client.setLoggingLevel('error');
    const sessionId = first.sessionId ?? '';
    // The other replica has never seen an initialize: the session alone tells it what to do.
    const response = await fetch(`${proxies[1]!.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'b' } },
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"text":"b"');
    const sent = bodiesOf('tools/call').at(-1)!;
    expect(metaOf(sent)).toMatchObject({
      [`${META}clientInfo`]: { name: 'old-client', version: '1.2.3' },
      [`${META}logLevel`]: 'error',
    });
  });
});
