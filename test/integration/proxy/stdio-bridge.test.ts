/**
 * The stdio bridge end to end: real MCP SDK clients (v1 and v2) through Moat's proxy to a real
 * SDK stdio server (the conformance fixture as a child process), streamable HTTP client side.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  return first?.type === 'text' ? first.text : '';
}

/** Polls (bounded in count and time) until `check` holds. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function v1Client(url: string, capabilities: Record<string, object> = {}): Promise<ClientV1> {
  const client = new ClientV1({ name: 'v1', version: '1' }, { capabilities });
  await client.connect(new HttpTransportV1(new URL(url)));
  return client;
}

async function v2Client(url: string, capabilities: Record<string, object> = {}): Promise<ClientV2> {
  const client = new ClientV2({ name: 'v2', version: '1' }, { capabilities });
  await client.connect(new HttpTransportV2(new URL(url)));
  return client;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) });
}

async function initializeRaw(url: string): Promise<string> {
  const response = await post(url, INIT);
  expect(response.status).toBe(200);
  const sessionId = response.headers.get('mcp-session-id');
  expect(sessionId).toMatch(/^[\x21-\x7e]{16,}$/);
  await response.text();
  return sessionId!;
}

describe('stdio bridge, streamable HTTP', () => {
  let moat: MoatUnderTest;
  let url: string;

  beforeAll(async () => {
    moat = await moatInFrontOf('stdio');
    url = `${moat.proxy.url}/mcp`;
  });
  afterAll(async () => {
    await moat?.stop();
  });

  it('serves two sessions (v1 and v2 clients) concurrently with overlapping request ids', async () => {
    const [a, b] = await Promise.all([v1Client(url), v2Client(url)]);
    try {
      // Both clients number their requests from the same start, so ids collide upstream unless rewritten.
      const calls = await Promise.all([
        a.callTool({ name: 'moat_echo', arguments: { text: 'from-a-slow', delay_ms: 400 } }),
        b.callTool({ name: 'moat_echo', arguments: { text: 'from-b-fast', delay_ms: 10 } }),
        a.callTool({ name: 'moat_echo', arguments: { text: 'from-a-fast', delay_ms: 10 } }),
        b.callTool({ name: 'moat_echo', arguments: { text: 'from-b-slow', delay_ms: 400 } }),
      ]);
      expect(calls.map(textOf)).toEqual(['from-a-slow', 'from-b-fast', 'from-a-fast', 'from-b-slow']);
      // The server was initialized once; the second session got the cached result.
      expect(a.getServerVersion()?.name).toBe('moat-conformance-fixture');
      expect(b.getServerVersion()?.name).toBe('moat-conformance-fixture');
      expect(moat.fixture?.children).toHaveLength(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('reports the stdio server on /health after pinging it', async () => {
    const response = await fetch(`${moat.proxy.url}/health`);
    expect(response.status).toBe(200);
    const health = (await response.json()) as {
      status: string;
      backend?: { reachable: boolean; latency_ms?: number };
    };
    expect(health.status).toBe('healthy');
    expect(health.backend?.reachable).toBe(true);
    expect(health.backend?.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('lets a v2 client with automatic era negotiation fall back to the stateful era', async () => {
    // The client probes with the 2026-07-28 server/discover first; the stdio server only knows
    // initialize, so the client must end up on a 2025 revision with a working session.
    const client = new ClientV2(
      { name: 'auto', version: '1' },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new HttpTransportV2(new URL(url)));
    try {
      expect(textOf(await client.callTool({ name: 'moat_echo', arguments: { text: 'negotiated' } }))).toBe(
        'negotiated',
      );
    } finally {
      await client.close();
    }
  });

  it('restores string and number ids exactly', async () => {
    const sessionId = await initializeRaw(url);
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    for (const id of ['7', 7, 'abc', 0]) {
      const response = await post(url, { jsonrpc: '2.0', id, method: 'ping' }, headers);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ jsonrpc: '2.0', id, result: {} });
    }
  });

  it('routes progress notifications to the session that asked, even with the same token', async () => {
    const [a, b] = await Promise.all([v1Client(url), v1Client(url)]);
    try {
      const progressA: number[] = [];
      const progressB: number[] = [];
      // The SDK uses the request id as the progress token: both sessions send the same token.
      await Promise.all([
        a.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
          onprogress: (p) => progressA.push(p.progress),
        }),
        b.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
          onprogress: (p) => progressB.push(p.progress),
        }),
      ]);
      expect(progressA).toEqual([0, 50, 100]);
      expect(progressB).toEqual([0, 50, 100]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('attributes sampling (v1 client) and elicitation (v2 client) to the calling session', async () => {
    const a = await v1Client(url, { sampling: {} });
    const b = await v2Client(url, { elicitation: { form: {} } });
    try {
      let samplingPrompts = 0;
      a.setRequestHandler(CreateMessageRequestSchema, (request) => {
        samplingPrompts++;
        const content = request.params.messages[0]?.content;
        const prompt = content && 'text' in content ? content.text : '';
        return { role: 'assistant', model: 'test', content: { type: 'text', text: `a saw ${prompt}` } };
      });
      b.setRequestHandler('elicitation/create', () => ({
        action: 'accept',
        content: { response: 'from-b' },
      }));
      const sampled = await a.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
      expect(textOf(sampled)).toBe('LLM response: a saw hello');
      const elicited = await b.callTool({ name: 'test_elicitation', arguments: { message: 'name?' } });
      expect(textOf(elicited)).toBe('Elicitation completed: action=accept, content={"response":"from-b"}');
      expect(samplingPrompts).toBe(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses a server request it cannot attribute, with an error the server sees', async () => {
    const a = await v1Client(url, { sampling: {} });
    const b = await v1Client(url, { sampling: {} });
    try {
      let asked = 0;
      for (const client of [a, b]) {
        client.setRequestHandler(CreateMessageRequestSchema, () => {
          asked++;
          return { role: 'assistant', model: 'test', content: { type: 'text', text: 'x' } };
        });
      }
      // b keeps an interactive request in flight, so a's sampling request has two candidates.
      const slow = b.callTool({ name: 'moat_echo', arguments: { text: 'slow', delay_ms: 4000 } });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refused = a.callTool({ name: 'test_sampling', arguments: { prompt: 'p' } });
      await expect(refused).rejects.toThrow(/could not attribute sampling\/createMessage/);
      expect(asked).toBe(0);
      expect(textOf(await slow)).toBe('slow');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses a server request the attributed client did not declare a capability for', async () => {
    const a = await v1Client(url);
    try {
      await expect(a.callTool({ name: 'test_sampling', arguments: { prompt: 'p' } })).rejects.toThrow(
        /did not declare the sampling capability/,
      );
    } finally {
      await a.close();
    }
  });

  it('sends list_changed to every session and resources/updated to subscribers only', async () => {
    const [a, b] = await Promise.all([v1Client(url), v1Client(url)]);
    try {
      const changed = { a: 0, b: 0 };
      const updated = { a: 0, b: 0 };
      a.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.a++);
      b.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.b++);
      a.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updated.a++);
      b.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updated.b++);
      // The clients open their standalone GET streams in the background after initialize, so
      // trigger until both streams carried one (bounded).
      for (let i = 0; i < 40 && (changed.a === 0 || changed.b === 0); i++) {
        await b.callTool({ name: 'moat_notify_list_changed', arguments: {} });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(changed.a).toBeGreaterThan(0);
      expect(changed.b).toBeGreaterThan(0);

      await a.subscribeResource({ uri: 'test://watched-resource' });
      await b.callTool({ name: 'moat_touch_watched_resource', arguments: {} });
      await eventually(() => updated.a === 1, 'resources/updated on the subscriber');
      // b is no subscriber: after a second trigger reached a, b still has nothing.
      await b.callTool({ name: 'moat_touch_watched_resource', arguments: {} });
      await eventually(() => updated.a === 2, 'second update');
      expect(updated.b).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('answers 404 Session not found for unknown sessions and 400 without a session', async () => {
    const unknown = await post(
      url,
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      { 'mcp-session-id': 'nope' },
    );
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32001, message: 'Session not found' },
    });
    const missing = await post(url, { jsonrpc: '2.0', id: 6, method: 'tools/list' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(
      /Mcp-Session-Id/,
    );
    const get = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } });
    expect(get.status).toBe(404);
  });

  it('ends a session on DELETE', async () => {
    const sessionId = await initializeRaw(url);
    const headers = { 'mcp-session-id': sessionId };
    const ok = await post(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, headers);
    expect(ok.status).toBe(200);
    await ok.text();
    const deleted = await fetch(url, { method: 'DELETE', headers });
    expect(deleted.status).toBe(204);
    const after = await post(url, { jsonrpc: '2.0', id: 3, method: 'ping' }, headers);
    expect(after.status).toBe(404);
    await after.text();
  });

  it('rejects bad input with JSON-RPC errors', async () => {
    const sessionId = await initializeRaw(url);
    const headers = { ...JSON_HEADERS, 'mcp-session-id': sessionId };
    const malformed = await fetch(url, { method: 'POST', headers, body: '{"jsonrpc":"2.0",' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const batch = await post(url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], headers);
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const strayResponse = await post(url, { jsonrpc: '2.0', id: 'never-asked', result: {} }, headers);
    expect(strayResponse.status).toBe(400);
    expect(((await strayResponse.json()) as { error: { message: string } }).error.message).toMatch(
      /No server request/,
    );
    const notAccepted = await post(
      url,
      { jsonrpc: '2.0', id: 9, method: 'ping' },
      { ...headers, accept: 'text/html' },
    );
    expect(notAccepted.status).toBe(406);
    await notAccepted.text();
  });

  it('answers notifications with 202 and streams a request when the server sends related messages', async () => {
    const sessionId = await initializeRaw(url);
    const headers = { 'mcp-session-id': sessionId };
    const note = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    expect(note.status).toBe(202);
    const logging = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 'log',
        method: 'tools/call',
        params: { name: 'test_tool_with_logging', arguments: {} },
      },
      headers,
    );
    expect(logging.headers.get('content-type')).toBe('text/event-stream');
    expect(logging.headers.get('x-accel-buffering')).toBe('no');
    const events = (await logging.text()).split('\n\n').filter((e) => e.startsWith('event: message'));
    const messages = events.map(
      (e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as Record<string, unknown>,
    );
    expect(messages.filter((m) => m.method === 'notifications/message')).toHaveLength(3);
    expect(messages.at(-1)).toMatchObject({ id: 'log', result: { content: [{ type: 'text' }] } });
  });
});

describe('stdio bridge, stateless and 2026-07-28', () => {
  let moat: MoatUnderTest;
  let url: string;

  beforeAll(async () => {
    moat = await moatInFrontOf('stdio', { stateless: true });
    url = `${moat.proxy.url}/mcp`;
  });
  afterAll(async () => {
    await moat?.stop();
  });

  it('is POST-only without sessions when stateless', async () => {
    const get = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    await get.text();
    const init = await post(url, INIT);
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    await init.text();
    const call = await post(url, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'moat_echo', arguments: { text: 'stateless' } },
    });
    expect(call.status).toBe(200);
    expect(textOf(((await call.json()) as { result: unknown }).result)).toBe('stateless');
  });

  it('serves a v1 client in stateless mode, server requests included', async () => {
    const client = await v1Client(url, { sampling: {} });
    try {
      expect(textOf(await client.callTool({ name: 'moat_echo', arguments: { text: 'v1' } }))).toBe('v1');
      // The sampling request arrives on the call's response stream; the answer comes back on a
      // new, session-less POST.
      client.setRequestHandler(CreateMessageRequestSchema, () => ({
        role: 'assistant',
        model: 'm',
        content: { type: 'text', text: 'stateless sample' },
      }));
      expect(textOf(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'x' } }))).toBe(
        'LLM response: stateless sample',
      );
    } finally {
      await client.close();
    }
  });

  it('answers 2026-07-28 requests without minting a session', async () => {
    const response = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'moat_echo',
          arguments: { text: 'modern' },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'moat_echo' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    expect(textOf(((await response.json()) as { result: unknown }).result)).toBe('modern');
  });
});

describe('stdio bridge, capabilities of later sessions', () => {
  it('lets a later client sample although the first client (which initialized the server) could not', async () => {
    const moat = await moatInFrontOf('stdio');
    try {
      const url = `${moat.proxy.url}/mcp`;
      const first = await v1Client(url); // no capabilities: this initialize reaches the server
      const later = await v1Client(url, { sampling: {} });
      later.setRequestHandler(CreateMessageRequestSchema, () => ({
        role: 'assistant',
        model: 'm',
        content: { type: 'text', text: 'later' },
      }));
      expect(textOf(await later.callTool({ name: 'test_sampling', arguments: { prompt: 'p' } }))).toBe(
        'LLM response: later',
      );
      // The first client still cannot be asked: the proxy answers the server for it.
      await expect(first.callTool({ name: 'test_sampling', arguments: { prompt: 'p' } })).rejects.toThrow(
        /did not declare the sampling capability/,
      );
      await Promise.all([first.close(), later.close()]);
    } finally {
      await moat.stop();
    }
  });
});

describe('stdio bridge, session TTL', () => {
  it('slides the TTL on use and answers 404 once a session sat idle past it', async () => {
    const moat = await moatInFrontOf('stdio', { session_ttl: '3s' });
    try {
      const url = `${moat.proxy.url}/mcp`;
      const sessionId = await initializeRaw(url);
      const ping = async () => {
        const response = await post(
          url,
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { 'mcp-session-id': sessionId },
        );
        await response.text();
        return response.status;
      };
      // Used every 500 ms for 5 s (well past the TTL): still alive.
      for (let i = 0; i < 10; i++) {
        expect(await ping()).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await new Promise((resolve) => setTimeout(resolve, 6000));
      expect(await ping()).toBe(404);
    } finally {
      await moat.stop();
    }
  });
});

describe('stdio bridge, re-attach', () => {
  it('re-attaches and re-initializes when the server process goes away', async () => {
    const moat = await moatInFrontOf('stdio');
    try {
      const client = await v1Client(`${moat.proxy.url}/mcp`);
      expect(textOf(await client.callTool({ name: 'moat_echo', arguments: { text: 'one' } }))).toBe('one');
      const first = moat.fixture!.children[0]!;
      first.kill('SIGKILL');
      await eventually(() => moat.fixture!.children.length === 2, 'a second attachment');
      expect(textOf(await client.callTool({ name: 'moat_echo', arguments: { text: 'two' } }))).toBe('two');
      await client.close();
    } finally {
      await moat.stop();
    }
  });
});
