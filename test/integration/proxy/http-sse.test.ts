/**
 * Legacy HTTP+SSE backends (MCP 2024-11-05) through the proxy: real v1 SSE server, real v1 and
 * v2 SSE clients. The `endpoint` event is rewritten to the proxy's external URL with a
 * client-facing session id; X-Forwarded-* count only with --trust-proxy-headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SseTransportV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, SSEClientTransport as SseTransportV2 } from '@modelcontextprotocol/client';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { MemorySessionStore } from '../../../src/proxy/sessions/memory.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1SseBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';
import { readUntil } from '../../support/streams.js';

let backend: HttpBackendServer;
const proxies: RunningProxy[] = [];

async function proxyWith(
  overrides: Partial<RunConfigInput> = {},
  sessions?: MemorySessionStore,
): Promise<RunningProxy> {
  const proxy = await startProxy(
    testConfig({ transport: 'sse', ...overrides }),
    { kind: 'http', url: backend.url, transport: 'sse', remote: false },
    { logger: memoryLogger().logger, ...(sessions ? { sessions } : {}) },
  );
  proxies.push(proxy);
  return proxy;
}

beforeAll(async () => {
  backend = await startV1SseBackend();
});
afterAll(async () => {
  for (const p of proxies) await p.close();
  await backend.close();
});

/** Opens GET /sse and returns the endpoint event's data, then closes the stream. */
async function endpointOf(url: string, headers: Record<string, string> = {}): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('x-accel-buffering')).toBe('no');
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const { text } = await readUntil(reader, (read) => /event: endpoint\r?\ndata: .*\r?\n\r?\n/.test(read));
  controller.abort();
  return /event: endpoint\r?\ndata: (.*)\r?\n/.exec(text)?.[1] ?? '';
}

const textOf = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

describe('legacy SSE through the proxy', () => {
  let proxy: RunningProxy;
  beforeAll(async () => {
    proxy = await proxyWith();
  });

  it('serves v1 and v2 SSE clients at once, log notifications to the caller only', async () => {
    const logs: Record<string, string[]> = { v1: [], v2: [] };
    const v1 = new ClientV1({ name: 'sse-v1', version: '1' });
    v1.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.v1?.push(String(n.params.data));
    });
    await v1.connect(new SseTransportV1(new URL(`${proxy.url}/sse`)));
    const v2 = new ClientV2({ name: 'sse-v2', version: '1' });
    v2.setNotificationHandler('notifications/message', (n) => {
      logs.v2?.push(String(n.params.data));
    });
    await v2.connect(new SseTransportV2(new URL(`${proxy.url}/sse`)));

    const [r1, r2] = await Promise.all([
      v1.callTool({ name: 'progress', arguments: { tag: 'one' } }),
      v2.callTool({ name: 'progress', arguments: { tag: 'two' } }),
    ]);
    expect(textOf(r1)).toBe('done:one');
    expect(textOf(r2)).toBe('done:two');
    expect(logs).toEqual({ v1: ['log:one'], v2: ['log:two'] });
    expect(textOf(await v2.callTool({ name: 'add', arguments: { a: 1, b: 1 } }))).toBe('2');
    await v1.close();
    await v2.close();
  });

  it('announces its own message URL with a client-facing session id', async () => {
    const endpoint = new URL(await endpointOf(`${proxy.url}/sse`));
    expect(endpoint.origin).toBe(proxy.url);
    expect(endpoint.pathname).toBe('/messages');
    const sessionId = endpoint.searchParams.get('sessionId');
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(backend.sessionIds).not.toContain(sessionId);
  });

  it('refuses message posts without, or with an unknown or ended, session', async () => {
    const missing = await post(`${proxy.url}/messages`, INIT_BODY);
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ error: { code: -32600 } });
    const unknown = await post(`${proxy.url}/messages?sessionId=not-a-session`, INIT_BODY);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: -32001, message: 'Session not found' } });
    // The stream was closed by endpointOf: its session is gone.
    const ended = new URL(await endpointOf(`${proxy.url}/sse`));
    await new Promise((r) => setTimeout(r, 100));
    const afterClose = await post(ended.href, INIT_BODY);
    expect(afterClose.status).toBe(404);
  });
});

describe('the endpoint URL', () => {
  const forwarded = {
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'mcp.example.com',
    'x-forwarded-prefix': '/team',
  };

  it('ignores X-Forwarded-* unless --trust-proxy-headers', async () => {
    const proxy = await proxyWith();
    expect(new URL(await endpointOf(`${proxy.url}/sse`, forwarded)).origin).toBe(proxy.url);
  });

  it('honors X-Forwarded-Proto/Host/Prefix with --trust-proxy-headers', async () => {
    const proxy = await proxyWith({ trust_proxy_headers: true });
    const endpoint = new URL(await endpointOf(`${proxy.url}/sse`, forwarded));
    expect(`${endpoint.origin}${endpoint.pathname}`).toBe('https://mcp.example.com/team/messages');
  });

  it('puts --endpoint-prefix in front of the message path', async () => {
    const proxy = await proxyWith({ endpoint_prefix: '/gateway/fetch/' });
    const endpoint = new URL(await endpointOf(`${proxy.url}/sse`));
    expect(`${endpoint.origin}${endpoint.pathname}`).toBe(`${proxy.url}/gateway/fetch/messages`);
  });
});

describe('two proxies sharing a session store', () => {
  it('accepts message posts on B for a stream held by A (answers on A’s stream, still filtered)', async () => {
    const shared = new MemorySessionStore({ ttlMs: 60_000 });
    const a = await proxyWith({ tools_filter: ['echo'] }, shared);
    const b = await proxyWith({ tools_filter: ['echo'] }, shared);
    const client = new ClientV1({ name: 'split', version: '1' });
    // The stream goes to A; message POSTs go to B.
    const transport = new SseTransportV1(new URL(`${a.url}/sse`), {
      fetch: (input, init) =>
        fetch(init?.method === 'POST' ? String(input).replace(a.url, b.url) : input, init),
    });
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'via B' } }))).toBe('via B');
    // A never saw the tools/list request, yet the answer on its stream is filtered.
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    // B refuses a hidden tool; without the stream to answer on, it says so with HTTP 400.
    await expect(client.callTool({ name: 'secret', arguments: {} })).rejects.toThrow(
      /400.*Unknown tool: secret/,
    );
    await client.close();
    await shared.close();
  });
});
