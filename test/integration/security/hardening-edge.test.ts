/**
 * The HTTP edge under hostile clients, through a real proxy in front of a real v1 SDK server:
 * timeouts that cover the header phase, a 413 the client can read while it keeps sending,
 * RFC 9110/9112 rules (Connection-named headers, Host), and a JSON-RPC error body for every
 * rejection Node's HTTP parser makes.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, MCP_HEADERS, testConfig } from '../../support/proxy-harness.js';
import { rawRequest, readAnswer, type RawAnswer } from '../../support/raw-http.js';

let backend: HttpBackendServer;
let proxy: RunningProxy;
const proxyLog = memoryLogger();

beforeAll(async () => {
  backend = await startV1StreamableBackend({ json: true });
  proxy = await startProxy(
    testConfig({ proxy_read_timeout: '3s', max_request_body_size: 64 * 1024 }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: proxyLog.logger },
  );
});
afterAll(async () => {
  await proxy.close();
  await backend.close();
});

const raw = (request: string | Buffer): Promise<RawAnswer> => rawRequest(proxy.port, request);

function expectRpcBody(answer: RawAnswer): void {
  expect(answer.head).toMatch(/content-type: application\/json/i);
  expect(JSON.parse(answer.body)).toMatchObject({
    jsonrpc: '2.0',
    id: null,
    error: { message: expect.any(String) },
  });
}

const body = JSON.stringify(INIT_BODY);
const head = (extra: string) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
  `accept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n${extra}\r\n`;

describe('timeouts', () => {
  it('answers trickled headers with 408 and a JSON-RPC body, bounded by the read timeout', async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    const answer = readAnswer(socket);
    socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write('x-slow: 1\r\n');
    }, 500);
    const result = await answer;
    clearInterval(trickle);
    expect(result.status).toBe(408);
    expectRpcBody(result);
    // A bound, not a performance assertion: Node's own default let this run for 48-57 s.
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

/** A request body sent as a stream of 64 KiB chunks (chunked on the wire). */
function streamOf(total: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x78);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close();
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

describe('413 reaches a client that keeps sending', () => {
  it.each([
    ['a declared length', () => 'x'.repeat(32 * 1024 * 1024)],
    ['a stream (no declared length)', () => streamOf(32 * 1024 * 1024)],
  ])('with fetch and a large body of %s', async (_name, makeBody) => {
    const res = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: makeBody(),
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringContaining('too large') } });
  });

  it('on a raw socket streaming a chunked body', async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const answer = readAnswer(socket);
    socket.write(
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        'accept: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    );
    const chunk = 'y'.repeat(16 * 1024);
    const pump = setInterval(() => {
      if (!socket.destroyed) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    }, 5);
    const result = await answer;
    clearInterval(pump);
    expect(result.status).toBe(413);
    expectRpcBody(result);
  });
});

/** `bytes` of a chunked body, in 16 KiB chunks. */
function chunks(bytes: number): string {
  const chunk = 'y'.repeat(16 * 1024);
  return `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(Math.ceil(bytes / chunk.length));
}

/** Resolves with the socket's error, or undefined once the data is handed to the kernel. */
function send(socket: Socket, data: string): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const onError = (err: Error) => resolve(err);
    socket.once('error', onError);
    socket.write(data, (err) => {
      socket.off('error', onError);
      resolve(err ?? undefined);
    });
  });
}

/** Resolves once the proxy has logged a 413 refusal past `seen` log lines (bounded). */
async function refusalLogged(seen: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!proxyLog.lines.slice(seen).some((l) => l.includes('Request body too large'))) {
    if (Date.now() > deadline) throw new Error('the proxy did not refuse the body within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('413 reaches a client that reads only after its whole body is sent', () => {
  /*
   * Before the fix (1664c4a~1) the proxy stopped reading at the limit, answered 413 with
   * `Connection: close` and closed the socket with the rest of the body unread, so the kernel
   * reset the connection. This client's next write then failed with EPIPE (or ECONNRESET), Node
   * destroyed the socket, and the 413 waiting in its receive buffer was never read: the client
   * saw a write error and no answer at all. Now the proxy drains up to DRAIN_LIMIT_BYTES (16 MiB)
   * after answering, so a body that ends within that bound is read to its end.
   */
  it('on a raw socket that goes on writing after the proxy answered', async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise((resolve) => socket.once('connect', resolve));
    // Read nothing until the body is sent, like a client that sends its request, then reads.
    socket.pause();
    const seen = proxyLog.lines.length;
    // Far over the 64 KiB limit: more than the proxy reads before it refuses.
    const first = await send(
      socket,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        'accept: application/json\r\ntransfer-encoding: chunked\r\n\r\n' +
        chunks(512 * 1024),
    );
    expect(first).toBeUndefined();
    await refusalLogged(seen);
    // Let the proxy finish its answer (and, before the fix, its close) before writing on.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const rest = await send(socket, chunks(256 * 1024) + '0\r\n\r\n');
    const answer = readAnswer(socket);
    socket.resume();
    const result = await answer;
    // Before the fix: { writeError: 'EPIPE', status: 0 } (no byte of the answer was read).
    expect({ writeError: rest?.message, status: result.status }).toEqual({
      writeError: undefined,
      status: 413,
    });
    expectRpcBody(result);
  });
});

describe('HTTP rules', () => {
  it('refuses a Connection header naming a header the proxy injects', async () => {
    for (const named of ['authorization', 'X-Forwarded-For', 'mcp-session-id']) {
      const answer = await raw(head(`connection: keep-alive, ${named}\r\n`) + body);
      expect(answer.status).toBe(400);
      expectRpcBody(answer);
      expect(answer.body).toContain('Connection');
    }
  });

  it('drops the headers a Connection header names before forwarding', async () => {
    const before = backend.seen.length;
    const answer = await raw(
      head('connection: keep-alive, x-hop\r\nx-hop: secret\r\nx-kept: yes\r\n') + body,
    );
    expect(answer.status).toBe(200);
    const seen = backend.seen.slice(before).find((r) => r.method === 'POST');
    expect(seen?.headers['x-kept']).toBe('yes');
    expect(seen?.headers['x-hop']).toBeUndefined();
  });

  it('refuses two Host headers and a missing Host with 400 and a JSON-RPC body', async () => {
    const two = await raw(head('Host: evil.example\r\n') + body);
    expect(two.status).toBe(400);
    expectRpcBody(two);
    const missing = await raw(head('').replace('Host: 127.0.0.1\r\n', '') + body);
    expect(missing.status).toBe(400);
    expectRpcBody(missing);
  });

  it.each([
    ['a NUL in a header value', head('x-bad: a\u0000b\r\n') + body, 400],
    ['oversized headers', head(`x-big: ${'a'.repeat(20_000)}\r\n`) + body, 431],
    ['too many headers', head(Array.from({ length: 2100 }, (_, i) => `x-h${i}: 1\r\n`).join('')) + body, 431],
    ['Content-Length with Transfer-Encoding', head('transfer-encoding: chunked\r\n') + body, 400],
    ['two different Content-Lengths', head('content-length: 3\r\n') + body, 400],
    ['a malformed request line', 'POST /mcp HTTP/9.9 extra\r\nHost: x\r\n\r\n', 400],
  ])('answers %s with a JSON-RPC error body', async (_name, request, status) => {
    const answer = await raw(request);
    expect(answer.status).toBe(status);
    expectRpcBody(answer);
  });
});

describe('strict envelope check before any policy (none configured here)', () => {
  it.each([
    ['a case-variant duplicate key', '{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}'],
    [
      'a duplicate key after nested content',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[{"y":{}}]},"name":"b"}}',
    ],
    ['a float id', '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}'],
    ['trailing bytes', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"jsonrpc":"2.0"}'],
  ])('refuses %s with 400 before the backend sees it', async (_name, text) => {
    const before = backend.seen.length;
    const res = await fetch(`${proxy.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: text });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { message: expect.any(String) } });
    expect(backend.seen.length).toBe(before);
  });

  it('accepts a body with a leading BOM and forwards it without the BOM', async () => {
    const res = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: `\ufeff${JSON.stringify(INIT_BODY)}`,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 1, result: { protocolVersion: expect.any(String) } });
  });
});
