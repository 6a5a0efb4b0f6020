/**
 * The stdio bridge with the deprecated HTTP+SSE client side (`proxy_mode: sse`), and the tool
 * filter over both client sides: real SDK clients (v1 and v2) to the fixture over stdio.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SseTransportV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, SSEClientTransport as SseTransportV2 } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';

function textOf(result: unknown): string {
  const first = (result as CallToolResult).content[0];
  return first?.type === 'text' ? first.text : '';
}

/** Opens GET /sse and returns the `endpoint` event's data, then closes the stream. */
async function endpointOf(sseUrl: string, headers: Record<string, string> = {}): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(sseUrl, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  expect(response.headers.get('x-accel-buffering')).toBe('no');
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  for (let i = 0; i < 50 && !text.includes('\n\n'); i++) text += (await reader.read()).value ?? '';
  controller.abort();
  const match = /^event: endpoint\ndata: (.+)\n\n/.exec(text);
  expect(match).not.toBeNull();
  return match![1]!;
}

describe('stdio bridge, legacy SSE client side', () => {
  let moat: MoatUnderTest;
  let sseUrl: string;

  beforeAll(async () => {
    moat = await moatInFrontOf('stdio', { proxy_mode: 'sse', endpoint_prefix: '/team-a/' });
    sseUrl = `${moat.proxy.url}/sse`;
  });
  afterAll(async () => {
    await moat?.stop();
  });

  it('announces the message endpoint under the endpoint prefix', async () => {
    const endpoint = await endpointOf(sseUrl);
    expect(endpoint).toMatch(
      new RegExp(`^${moat.proxy.url}/team-a/messages\\?session_id=[\\x21-\\x7e]{16,}$`),
    );
  });

  it('serves v1 and v2 SSE clients at once, each answer on its own stream only', async () => {
    const a = new ClientV1({ name: 'v1', version: '1' }, { capabilities: { sampling: {} } });
    const b = new ClientV2({ name: 'v2', version: '1' }, { capabilities: {} });
    await a.connect(new SseTransportV1(new URL(sseUrl)));
    await b.connect(new SseTransportV2(new URL(sseUrl)));
    try {
      const results = await Promise.all([
        a.callTool({ name: 'moat_echo', arguments: { text: 'a', delay_ms: 300 } }),
        b.callTool({ name: 'moat_echo', arguments: { text: 'b', delay_ms: 10 } }),
        a.callTool({ name: 'moat_echo', arguments: { text: 'a2', delay_ms: 10 } }),
      ]);
      expect(results.map(textOf)).toEqual(['a', 'b', 'a2']);

      a.setRequestHandler(CreateMessageRequestSchema, () => ({
        role: 'assistant',
        model: 'm',
        content: { type: 'text', text: 'over sse' },
      }));
      expect(textOf(await a.callTool({ name: 'test_sampling', arguments: { prompt: 'q' } }))).toBe(
        'LLM response: over sse',
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('puts progress notifications on the calling session stream before the response', async () => {
    // A raw client: the SDK's v1 client may lose a notification that shares a network read with
    // the response (it handles notifications a microtask later than responses).
    const controller = new AbortController();
    const response = await fetch(sseUrl, {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const messages: Array<Record<string, unknown>> = [];
    let endpoint = '';
    let buffer = '';
    const pump = (async () => {
      for (let i = 0; i < 1000; i++) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(event)?.[1] ?? '';
          if (event.startsWith('event: endpoint')) endpoint = data;
          else messages.push(JSON.parse(data) as Record<string, unknown>);
        }
      }
    })().catch(() => undefined);
    try {
      for (let i = 0; i < 100 && !endpoint; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      const send = async (body: object) => {
        const r = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(r.status).toBe(202);
        await r.text();
      };
      await send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2024-11-05',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await send({
        jsonrpc: '2.0',
        id: 'p',
        method: 'tools/call',
        params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'tok' } },
      });
      for (let i = 0; i < 200 && !messages.some((m) => m.id === 'p'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const afterInit = messages
        .slice(1)
        .map((m) => (m.method === 'notifications/progress' ? m.params : m.id));
      expect(afterInit).toEqual([
        { progressToken: 'tok', progress: 0, total: 100 },
        { progressToken: 'tok', progress: 50, total: 100 },
        { progressToken: 'tok', progress: 100, total: 100 },
        'p',
      ]);
    } finally {
      controller.abort();
      await pump;
    }
  });

  it('refuses posts for missing, unknown and closed sessions', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const headers = { 'content-type': 'application/json' };
    const missing = await fetch(`${moat.proxy.url}/messages`, { method: 'POST', headers, body });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/session_id/);
    const unknown = await fetch(`${moat.proxy.url}/messages?session_id=nope`, {
      method: 'POST',
      headers,
      body,
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32001, message: 'Session not found' },
    });

    const endpoint = await endpointOf(sseUrl); // the stream is closed again when this returns
    for (let i = 0; i < 40; i++) {
      const after = await fetch(endpoint, { method: 'POST', headers, body });
      await after.text();
      if (after.status === 404) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the session outlived its closed stream');
  });

  it('does not serve /mcp in SSE mode', async () => {
    const response = await fetch(`${moat.proxy.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/\/sse/);
  });
});

describe('stdio bridge, legacy SSE behind a trusted reverse proxy', () => {
  it('builds the endpoint from forwarded headers, with --endpoint-prefix winning over X-Forwarded-Prefix', async () => {
    const moat = await moatInFrontOf('stdio', {
      proxy_mode: 'sse',
      trust_proxy_headers: true,
      endpoint_prefix: '/team-b',
    });
    try {
      const headers = {
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'mcp.example.com',
        'x-forwarded-prefix': '/ingress',
      };
      expect(await endpointOf(`${moat.proxy.url}/sse`, headers)).toMatch(
        /^https:\/\/mcp\.example\.com\/team-b\/messages\?session_id=/,
      );
    } finally {
      await moat.stop();
    }
  });
});

describe('stdio bridge, tool filter', () => {
  for (const mode of ['streamable-http', 'sse'] as const) {
    describe(mode, () => {
      let moat: MoatUnderTest;
      let client: ClientV1;

      beforeAll(async () => {
        moat = await moatInFrontOf('stdio', {
          proxy_mode: mode,
          tools_filter: ['moat_echo', 'speak'],
          tools_override: { test_simple_text: { name: 'speak', description: 'Says something' } },
        });
        client = new ClientV1({ name: 'filtered', version: '1' });
        const base = moat.proxy.url;
        await client.connect(
          mode === 'sse'
            ? new SseTransportV1(new URL(`${base}/sse`))
            : new HttpTransportV1(new URL(`${base}/mcp`)),
        );
      });
      afterAll(async () => {
        await client?.close();
        await moat?.stop();
      });

      it('lists only the allowed tools, renamed, and maps calls back', async () => {
        const tools = (await client.listTools()).tools;
        expect(tools.map((t) => t.name).sort()).toEqual(['moat_echo', 'speak']);
        expect(tools.find((t) => t.name === 'speak')?.description).toBe('Says something');
        expect(textOf(await client.callTool({ name: 'speak', arguments: {} }))).toBe(
          'This is a simple text response for testing.',
        );
      });

      it('refuses calls to other tools', async () => {
        await expect(client.callTool({ name: 'test_error_handling', arguments: {} })).rejects.toThrow(
          /test_error_handling/,
        );
      });
    });
  }
});
