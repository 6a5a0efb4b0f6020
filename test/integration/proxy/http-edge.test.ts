/**
 * Edge rules and bad input, through a real proxy in front of a real v1 SDK server: every
 * refusal is an HTTP 4xx with a JSON-RPC error body, and nothing refused reaches the backend.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge } from '../../../src/proxy/edge/server.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, MCP_HEADERS, post, testConfig } from '../../support/proxy-harness.js';

let backend: HttpBackendServer;
const proxies: RunningProxy[] = [];

async function proxyWith(overrides: Partial<RunConfigInput>): Promise<RunningProxy> {
  const proxy = await startProxy(
    testConfig(overrides),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
  proxies.push(proxy);
  return proxy;
}

beforeAll(async () => {
  backend = await startV1StreamableBackend();
});
afterAll(async () => {
  for (const p of proxies) await p.close();
  await backend.close();
});

function expectRpcError(json: unknown, code: number): void {
  expect(json).toMatchObject({ jsonrpc: '2.0', error: { code, message: expect.any(String) } });
}

/** Sends a raw HTTP request over a socket; `pace` writes the body slowly. */
function rawRequest(port: number, head: string, body: string[], paceMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString('utf8')));
    socket.on('error', () => resolve(response));
    socket.on('close', () => resolve(response));
    socket.on('connect', () => {
      socket.write(head);
      let i = 0;
      const next = (): void => {
        if (i >= body.length || socket.destroyed) return;
        socket.write(body[i++] as string);
        setTimeout(next, paceMs);
      };
      next();
    });
    setTimeout(() => reject(new Error('raw request did not finish')), 20_000).unref();
  });
}

describe('request bodies', () => {
  let proxy: RunningProxy;
  beforeAll(async () => {
    proxy = await proxyWith({ max_request_body_size: 2048, proxy_read_timeout: '300ms' });
  });

  it('refuses a declared Content-Length over the limit with 413 before reading', async () => {
    const before = backend.seen.length;
    const res = await post(`${proxy.url}/mcp`, { ...INIT_BODY, pad: 'x'.repeat(4096) });
    expect(res.status).toBe(413);
    expectRpcError(res.json, -32600);
    expect(backend.seen.length).toBe(before);
  });

  it('refuses a chunked body that grows over the limit with 413', async () => {
    const head =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = 'x'.repeat(1024);
    const chunks = Array.from({ length: 4 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const response = await rawRequest(proxy.port, head, [...chunks, '0\r\n\r\n']);
    expect(response).toMatch(/^HTTP\/1\.1 413/);
    expect(response).toContain('"code":-32600');
  });

  it('refuses a body that arrives slower than the read timeout with 408', async () => {
    const body = JSON.stringify(INIT_BODY);
    const head =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n`;
    // One byte now, the rest never (the proxy must not wait forever).
    const response = await rawRequest(proxy.port, head, [body.slice(0, 1)]);
    expect(response).toMatch(/^HTTP\/1\.1 408/);
    expect(response).toContain('"code":-32000');
  });

  it('refuses a wrong content type with 415', async () => {
    const res = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: MCP_HEADERS.accept },
      body: JSON.stringify(INIT_BODY),
    });
    expect(res.status).toBe(415);
    expectRpcError(await res.json(), -32600);
  });

  it('passes bytes through unparsed when no policy is configured (the backend judges bad JSON)', async () => {
    const res = await post(`${proxy.url}/mcp`, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(res.status).toBe(400);
    expectRpcError(res.json, -32700);
  });
});

describe('with a message policy configured, the proxy parses and validates', () => {
  let proxy: RunningProxy;
  beforeAll(async () => {
    proxy = await proxyWith({ tools_filter: ['echo'] });
  });

  it.each([
    ['malformed JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', -32700],
    ['a batch', JSON.stringify([INIT_BODY, INIT_BODY]), -32600],
    ['a non-object', '42', -32600],
    ['a wrong jsonrpc version', JSON.stringify({ ...INIT_BODY, jsonrpc: '1.0' }), -32600],
    ['non-object params', JSON.stringify({ ...INIT_BODY, params: [1, 2] }), -32600],
  ])('refuses %s with 400', async (_what, body, code) => {
    const before = backend.seen.length;
    const res = await post(`${proxy.url}/mcp`, body);
    expect(res.status).toBe(400);
    expectRpcError(res.json, code);
    expect(backend.seen.length).toBe(before);
  });
});

describe('origins', () => {
  it('allows the loopback origins of its own port by default and refuses others with 403', async () => {
    const proxy = await proxyWith({});
    const ok = await post(`${proxy.url}/mcp`, INIT_BODY, { origin: `http://localhost:${proxy.port}` });
    expect(ok.status).toBe(200);
    const noOrigin = await post(`${proxy.url}/mcp`, INIT_BODY);
    expect(noOrigin.status).toBe(200);
    const before = backend.seen.length;
    const bad = await post(`${proxy.url}/mcp`, INIT_BODY, { origin: 'http://evil.example' });
    expect(bad.status).toBe(403);
    expectRpcError(bad.json, -32600);
    expect(backend.seen.length).toBe(before);
  });

  it('uses exactly the configured --allowed-origins', async () => {
    const proxy = await proxyWith({ allowed_origins: ['https://app.example'] });
    expect((await post(`${proxy.url}/mcp`, INIT_BODY, { origin: 'https://app.example' })).status).toBe(200);
    expect((await post(`${proxy.url}/mcp`, INIT_BODY, { origin: 'https://app.example:8443' })).status).toBe(
      403,
    );
    expect(
      (await post(`${proxy.url}/mcp`, INIT_BODY, { origin: `http://localhost:${proxy.port}` })).status,
    ).toBe(403);
  });
});

describe('CORS for browser clients on an allowed origin', () => {
  const APP = 'https://app.example';
  const preflight = (url: string, origin: string) =>
    fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-session-id, mcp-protocol-version',
      },
    });

  it('answers a preflight itself and lets the page read the session and challenge headers', async () => {
    const proxy = await proxyWith({ allowed_origins: [APP] });
    const before = backend.seen.length;
    const answer = await preflight(`${proxy.url}/mcp`, APP);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
    expect(answer.headers.get('access-control-allow-headers')).toContain('mcp-session-id');
    expect(answer.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
    expect(backend.seen.length).toBe(before);

    const init = await post(`${proxy.url}/mcp`, INIT_BODY, { origin: APP });
    expect(init.status).toBe(200);
    expect(init.headers.get('access-control-allow-origin')).toBe(APP);
    expect(init.headers.get('access-control-expose-headers')).toContain('mcp-session-id');
    expect(init.headers.get('access-control-expose-headers')).toContain('www-authenticate');
    expect(init.headers.get('vary')).toBe('Origin');
    expect(init.headers.get('mcp-session-id')).toBeTruthy();
  });

  it('gives no CORS headers without an Origin, and refuses a preflight from another origin', async () => {
    const proxy = await proxyWith({ allowed_origins: [APP] });
    const plain = await post(`${proxy.url}/mcp`, INIT_BODY);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const other = await preflight(`${proxy.url}/mcp`, 'https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expectRpcError(await other.json(), -32600);
  });

  it('offers only POST to a stateless proxy, and covers the default loopback origins', async () => {
    const stateless = await proxyWith({ allowed_origins: [APP], stateless: true });
    expect((await preflight(`${stateless.url}/mcp`, APP)).headers.get('access-control-allow-methods')).toBe(
      'POST, OPTIONS',
    );
    const loopback = await proxyWith({});
    const own = `http://127.0.0.1:${loopback.port}`;
    const answer = await preflight(`${loopback.url}/mcp`, own);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(own);
  });
});

describe('protocol gates', () => {
  it('with --strict-protocol-validation refuses an unknown MCP-Protocol-Version with 400, accepts known or absent', async () => {
    const proxy = await proxyWith({ strict_protocol_validation: true });
    const bad = await post(`${proxy.url}/mcp`, INIT_BODY, { 'mcp-protocol-version': '2099-01-01' });
    expect(bad.status).toBe(400);
    expectRpcError(bad.json, -32022);
    expect((await post(`${proxy.url}/mcp`, INIT_BODY, { 'mcp-protocol-version': '2025-06-18' })).status).toBe(
      200,
    );
    expect((await post(`${proxy.url}/mcp`, INIT_BODY)).status).toBe(200);
  });

  it('passes an unknown version through without strict validation', async () => {
    const proxy = await proxyWith({});
    // The proxy's own one-time `server/discover` probe (http/eras/up.ts) is not the client's request.
    const forwarded = () => backend.seen.filter((r) => r.headers['mcp-method'] !== 'server/discover').length;
    const before = forwarded();
    // (A date after 2026-07-28 would be held to that revision's header rules.)
    await post(`${proxy.url}/mcp`, INIT_BODY, { 'mcp-protocol-version': '2025-01-01' });
    // The backend, not the proxy, judged it.
    expect(forwarded()).toBe(before + 1);
    expect(backend.seen.at(-1)?.headers['mcp-protocol-version']).toBe('2025-01-01');
  });

  it('with --stateless answers GET and DELETE with 405 and Allow: POST', async () => {
    const proxy = await proxyWith({ stateless: true });
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${proxy.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expectRpcError(await res.json(), -32600);
    }
  });
});

describe('routes', () => {
  let proxy: RunningProxy;
  beforeAll(async () => {
    proxy = await proxyWith({});
  });

  it('serves /health with the transport, uptime and backend reachability', async () => {
    const res = await fetch(`${proxy.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'healthy',
      transport: 'streamable-http',
      uptime_seconds: expect.any(Number),
      backend: { reachable: true },
    });
    const wrong = await fetch(`${proxy.url}/health`, { method: 'POST' });
    expect(wrong.status).toBe(405);
  });

  it('reports a degraded backend when it is unreachable', async () => {
    const gone = await startV1StreamableBackend();
    await gone.close();
    const lonely = await startProxy(
      testConfig(),
      { kind: 'http', url: gone.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
    proxies.push(lonely);
    const res = await fetch(`${lonely.url}/health`);
    expect(await res.json()).toMatchObject({ status: 'degraded', backend: { reachable: false } });
    const call = await post(`${lonely.url}/mcp`, INIT_BODY);
    expect(call.status).toBe(502);
    expectRpcError(call.json, -32000);
  });

  it('answers unknown /.well-known/ paths with 404 and a JSON-RPC error', async () => {
    const res = await fetch(`${proxy.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(404);
    expectRpcError(await res.json(), -32600);
  });

  it('serves extra routes outside the middleware chain', async () => {
    const edge = createEdge({
      host: '127.0.0.1',
      port: 0,
      maxBodyBytes: 1024,
      readTimeoutMs: 5000,
      trustProxyHeaders: false,
      strictProtocolValidation: false,
      stateless: false,
      routes: [
        {
          prefix: '/.well-known/oauth-protected-resource',
          handle: (_req, res, base) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ resource: `${base}/mcp` }));
          },
        },
      ],
      middlewares: [
        async (request) => {
          request.res.writeHead(401).end();
          await Promise.resolve();
        },
      ],
      observers: [],
      transport: 'streamable-http',
      handler: { handle: () => Promise.reject(new Error('not reached')), close: () => Promise.resolve() },
      health: () => Promise.reject(new Error('not asked')),
      logger: memoryLogger().logger,
    });
    const port = await edge.listen();
    const base = `http://127.0.0.1:${port}`;
    try {
      const prm = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
      expect(await prm.json()).toEqual({ resource: `${base}/mcp` });
      expect((await post(`${base}/mcp`, INIT_BODY)).status).toBe(401);
    } finally {
      await edge.close();
    }
  });
});
