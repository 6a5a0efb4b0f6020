/**
 * The HTTP forwarder with real MCP SDK servers (v1 and v2) as streamable-HTTP backends and real
 * SDK clients (v1 and v2) talking through the proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import {
  startV1StreamableBackend,
  startV2StreamableBackend,
  type HttpBackendServer,
} from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, messagesOf, testConfig } from '../../support/proxy-harness.js';
import { readUntil } from '../../support/streams.js';

interface Setup {
  backend: HttpBackendServer;
  proxy: RunningProxy;
}

async function setup(start: () => Promise<HttpBackendServer>, keepAliveMs?: number): Promise<Setup> {
  const backend = await start();
  const proxy = await startProxy(
    testConfig(),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger, ...(keepAliveMs ? { keepAliveMs } : {}) },
  );
  return { backend, proxy };
}

async function teardown(s: Setup | undefined): Promise<void> {
  await s?.proxy.close();
  await s?.backend.close();
}

const firstText = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

describe.each([
  ['v1 server (SSE responses)', () => startV1StreamableBackend(), true],
  // A JSON response has no room for notifications; the SDK server does not send them then.
  ['v1 server (JSON responses)', () => startV1StreamableBackend({ json: true }), false],
  ['v2 server', () => startV2StreamableBackend(), true],
])('streamable HTTP through the proxy: %s', (_name, start, streamsNotifications) => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(start);
  });
  afterAll(() => teardown(s));

  it('serves a v1 client: initialize, tools/list, tools/call, session hidden, DELETE upstream', async () => {
    const client = new ClientV1({ name: 'v1-client', version: '1' });
    const transport = new TransportV1(new URL(`${s.proxy.url}/mcp`));
    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['add', 'echo', 'progress', 'secret']),
    );
    expect(firstText(await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } }))).toBe('42');

    const clientSessionId = transport.sessionId;
    expect(clientSessionId).toMatch(/^[0-9a-f-]{36}$/);
    const backendSessionId = s.backend.sessionIds.at(-1);
    expect(backendSessionId).toBeDefined();
    expect(clientSessionId).not.toBe(backendSessionId);
    // The backend saw its own id, never the client-facing one.
    const backendSawIds = new Set(s.backend.seen.map((r) => r.headers['mcp-session-id']).filter(Boolean));
    expect(backendSawIds.has(backendSessionId)).toBe(true);
    expect(backendSawIds.has(clientSessionId)).toBe(false);

    await transport.terminateSession();
    expect(
      s.backend.seen.some((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === backendSessionId),
    ).toBe(true);
    const after = await post(
      `${s.proxy.url}/mcp`,
      { jsonrpc: '2.0', id: 9, method: 'tools/list' },
      { 'mcp-session-id': clientSessionId as string, 'mcp-protocol-version': '2025-11-25' },
    );
    expect(after.status).toBe(404);
    await client.close();
  });

  it('serves a v2 client and delivers progress and log notifications to the calling client only', async () => {
    const clients = await Promise.all(
      ['a', 'b'].map(async (tag) => {
        const client = new ClientV2({ name: `v2-${tag}`, version: '1' });
        const logs: string[] = [];
        client.setNotificationHandler('notifications/message', (n) => {
          logs.push(String(n.params.data));
        });
        await client.connect(new TransportV2(new URL(`${s.proxy.url}/mcp`)));
        return { tag, client, logs };
      }),
    );
    const results = await Promise.all(
      clients.map(async ({ tag, client }) => {
        const progress: string[] = [];
        const result = await client.callTool(
          { name: 'progress', arguments: { tag } },
          { onprogress: (p) => progress.push(`${p.progress}/${p.total}:${p.message}`) },
        );
        return { tag, text: firstText(result), progress };
      }),
    );
    for (const r of results) {
      expect(r.text).toBe(`done:${r.tag}`);
      if (streamsNotifications) expect(r.progress).toEqual([`1/2:${r.tag}`, `2/2:${r.tag}`]);
    }
    for (const { tag, logs, client } of clients) {
      if (streamsNotifications) expect(logs).toEqual([`log:${tag}`]);
      await client.close();
    }
  });
});

describe('the standalone GET stream', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(() => startV1StreamableBackend(), 200);
  });
  afterAll(() => teardown(s));

  it('carries server notifications sent outside a request to the right client', async () => {
    const client = new ClientV1({ name: 'get-stream', version: '1' });
    const seen: string[] = [];
    const got = new Promise<void>((resolve) => {
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        seen.push(String(n.params.data));
        resolve();
      });
    });
    await client.connect(new TransportV1(new URL(`${s.proxy.url}/mcp`)));
    expect(firstText(await client.callTool({ name: 'later', arguments: { tag: 'x' } }))).toBe('scheduled');
    await got;
    expect(seen).toEqual(['later:x']);
    await client.close();
  });

  it('sends keep-alive comments and X-Accel-Buffering: no on an idle stream', async () => {
    const init = await post(`${s.proxy.url}/mcp`, INIT_BODY);
    const sessionId = init.headers.get('mcp-session-id') as string;
    await post(
      `${s.proxy.url}/mcp`,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    );
    const controller = new AbortController();
    const res = await fetch(`${s.proxy.url}/mcp`, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const { text: received } = await readUntil(reader, (text) => text.includes(': keep-alive'));
    controller.abort();
    expect(received).toContain(': keep-alive\n\n');
  });
});

describe('session rules', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(() => startV1StreamableBackend());
  });
  afterAll(() => teardown(s));

  it('answers an unknown session id with 404, -32001 and "Session not found"', async () => {
    const res = await post(
      `${s.proxy.url}/mcp`,
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { 'mcp-session-id': 'deadbeef-unknown', 'mcp-protocol-version': '2025-11-25' },
    );
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' } });
  });

  it('never forwards the backend session id nor the client Authorization header', async () => {
    const init = await post(`${s.proxy.url}/mcp`, INIT_BODY, { authorization: 'Bearer client-token' });
    expect(init.status).toBe(200);
    expect(messagesOf(init)[0]).toMatchObject({ id: 1, result: { serverInfo: { name: 'v1-streamable' } } });
    const exposed = init.headers.get('mcp-session-id');
    expect(exposed).toBeTruthy();
    expect(s.backend.sessionIds).not.toContain(exposed);
    expect(s.backend.seen.every((r) => r.headers.authorization === undefined)).toBe(true);
  });
});
