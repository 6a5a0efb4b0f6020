/**
 * Issue 31, findings 3 to 6: the HTTP edge against a hostile client and a hostile backend, through
 * a real proxy. Repeated identity or routing headers are refused (a front proxy keeping the last
 * of two would disagree with Node, which keeps the first or joins them); hop-by-hop response
 * headers and the ones the backend's Connection header names never reach the client; methods the
 * proxy does not serve (CONNECT included) get a 405 with a JSON-RPC body and never reach the
 * backend; an ordinary fetch() posting a body over the limit reads its 413 every time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, MCP_HEADERS, testConfig } from '../../support/proxy-harness.js';
import { rawRequest, type RawAnswer } from '../../support/raw-http.js';
import { startProxyProcess, stopProxyProcess, type ProxyProcess } from '../../support/proxy-processes.js';

let backend: HttpBackendServer;
let proxy: RunningProxy;

beforeAll(async () => {
  backend = await startV1StreamableBackend({ json: true });
  proxy = await startProxy(testConfig({ proxy_read_timeout: '10s' }), {
    kind: 'http',
    url: backend.url,
    transport: 'streamable-http',
    remote: false,
  });
});
afterAll(async () => {
  await proxy.close();
  await backend.close();
});

function rpcError(answer: RawAnswer): { message: string } {
  expect(answer.head).toMatch(/content-type: application\/json/i);
  const parsed = JSON.parse(answer.body) as { jsonrpc: string; error: { message: string } };
  expect(parsed.jsonrpc).toBe('2.0');
  return parsed.error;
}

const body = JSON.stringify(INIT_BODY);
const post = (extra: string) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
  `accept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

describe('finding 3: repeated singleton headers', () => {
  it.each([
    ['Authorization', 'Authorization: Bearer aaa\r\nauthorization: Bearer garbage\r\n'],
    ['Mcp-Session-Id', 'Mcp-Session-Id: one\r\nmcp-session-id: two\r\n'],
    ['MCP-Protocol-Version', 'MCP-Protocol-Version: 2025-11-25\r\nmcp-protocol-version: 2025-06-18\r\n'],
    ['Content-Type', 'Content-Type: application/json\r\n'],
    ['Content-Length', `Content-Length: ${body.length}\r\n`],
    ['Host', 'host: evil.example\r\n'],
  ])('refuses two %s headers with 400 naming the header, before the backend', async (name, extra) => {
    const before = backend.seen.length;
    const answer = await rawRequest(proxy.port, post(extra));
    expect(answer.status).toBe(400);
    expect(rpcError(answer).message).toContain(name);
    expect(backend.seen.length).toBe(before);
  });

  it('still serves a request whose other headers repeat (Accept twice is a list)', async () => {
    const answer = await rawRequest(
      proxy.port,
      post('accept: application/json\r\nx-note: a\r\nx-note: b\r\n'),
    );
    expect(answer.status).toBe(200);
  });
});

describe('finding 5: methods the proxy does not serve', () => {
  it('answers CONNECT with 405, Allow and a JSON-RPC error body', async () => {
    const answer = await rawRequest(
      proxy.port,
      'CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n',
    );
    expect(answer.status).toBe(405);
    expect(answer.head).toMatch(/^allow: GET, POST, DELETE/im);
    expect(rpcError(answer).message).toContain('CONNECT');
  });

  it.each(['TRACE', 'PUT', 'PATCH', 'PROPFIND', 'PURGE'])(
    'answers %s with 405 and never reaches the backend',
    async (method) => {
      const before = backend.seen.length;
      const answer = await rawRequest(
        proxy.port,
        `${method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length}\r\n\r\n${body}`,
      );
      expect(answer.status).toBe(405);
      expect(answer.head).toMatch(/^allow: GET, POST, DELETE/im);
      expect(rpcError(answer).message).toContain(method);
      expect(backend.seen.length).toBe(before);
    },
  );

  it('answers a method Node does not know with the same 405', async () => {
    const answer = await rawRequest(proxy.port, 'FROB /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(answer.status).toBe(405);
    expect(answer.head).toMatch(/^allow: GET, POST, DELETE/im);
    expect(rpcError(answer).message).toContain('Method not allowed');
  });
});

describe('finding 6: a fetch() posting a body over the limit reads its 413', () => {
  // The proxy in a process of its own, as `moat run` runs it: in this process the client and the
  // proxy would take turns on one event loop, which hides the race between the answer and a reset.
  let separate: ProxyProcess | undefined;
  beforeAll(async () => {
    separate = await startProxyProcess(testConfig(), {
      kind: 'http',
      url: backend.url,
      transport: 'streamable-http',
      remote: false,
    });
  });
  afterAll(() => stopProxyProcess(separate));

  /** What `count` fetch() POSTs of `body` in a row got: `413 true` for a 413 with its JSON-RPC error. */
  async function tries(body: string, count: number): Promise<string[]> {
    const outcomes: string[] = [];
    for (let i = 0; i < count; i++) {
      try {
        const res = await fetch(`${separate?.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body });
        const answer = (await res.json()) as { error?: { message?: string } };
        outcomes.push(`${res.status} ${answer.error?.message?.includes('too large') === true}`);
      } catch (err) {
        outcomes.push(String((err as { cause?: { code?: string } }).cause?.code ?? err));
      }
    }
    return outcomes;
  }

  // Before the fix: ECONNRESET in 6 of 20 (the proxy closed after draining 1 MiB of the body).
  it('with a body 1 MiB over the default 8 MiB limit', async () => {
    expect(await tries('x'.repeat(9 * 1024 * 1024), 20)).toEqual(Array(20).fill('413 true'));
  });

  // Beyond the drain bound: fetch stops sending once it has read the answer, well within it.
  it('with a body of 64 MiB', async () => {
    expect(await tries('x'.repeat(64 * 1024 * 1024), 10)).toEqual(Array(10).fill('413 true'));
  });
});

/** A hostile backend: answers every POST with the given headers and a JSON-RPC result. */
async function headerBackend(headers: Record<string, string>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const id = (JSON.parse(text) as { id: number }).id;
      const answer = JSON.stringify({
        jsonrpc: '2.0',
        id,
        result: { protocolVersion: '2025-11-25', capabilities: {} },
      });
      // A length of its own, so the answer is read whole (a chunked JSON answer is relayed as it
      // streams, as JSON lines, and Node chunks it again towards the client). Node refuses a
      // `Trailer` header beside a length, so this backend cannot send one.
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(answer),
        ...headers,
      });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

describe('finding 4: response headers a proxy must not forward', () => {
  it('drops what the backend names in Connection, the hop-by-hop set, Alt-Svc and HSTS', async () => {
    const hostile = await headerBackend({
      connection: 'close, x-hop, X-Other-Hop',
      'x-hop': 'secret',
      'x-other-hop': 'secret too',
      'proxy-authenticate': 'Basic realm="backend"',
      'keep-alive': 'timeout=5',
      upgrade: 'h2c',
      te: 'trailers',
      'proxy-connection': 'keep-alive',
      'alt-svc': 'h3=":443"; ma=86400',
      'strict-transport-security': 'max-age=63072000; includeSubDomains',
      'x-kept': 'yes',
    });
    const front = await startProxy(testConfig(), {
      kind: 'http',
      url: hostile.url,
      transport: 'streamable-http',
      remote: false,
    });
    try {
      const answer = await rawRequest(front.port, post(''));
      expect(answer.status).toBe(200);
      const names = answer.head
        .split('\r\n')
        .slice(1)
        .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
      expect(names).toContain('x-kept');
      for (const dropped of [
        'x-hop',
        'x-other-hop',
        'proxy-authenticate',
        'upgrade',
        'trailer',
        'te',
        'proxy-connection',
        'transfer-encoding',
        'alt-svc',
        'strict-transport-security',
      ]) {
        expect(names, dropped).not.toContain(dropped);
      }
      // Node writes its own Keep-Alive on a kept-alive connection; the backend's must not be it.
      expect(answer.head.toLowerCase()).not.toContain('keep-alive: timeout=5\r\n');
      expect(JSON.parse(answer.body)).toMatchObject({ id: 1, result: { protocolVersion: '2025-11-25' } });
    } finally {
      await front.close();
      await new Promise((resolve) => hostile.server.close(resolve));
    }
  });
});
