/**
 * Broken upstream answers through the real proxy: a server that dies mid-body, answers garbage or
 * a result nested 100 000 deep, or never answers. The client must get a clean JSON-RPC error
 * (HTTP 502/504), its connection must never carry bytes of another response (a pipelining test on
 * a raw socket), and every wait has a bound. The backend is a deliberately broken HTTP server
 * written here (a fake: no real MCP server misbehaves on demand).
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

const DEPTH = 100_000;

/** A fake MCP server that breaks on demand: the tool name says how. */
function startBrokenBackend(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        params: { name: string };
      };
      const { id } = message;
      switch (message.params.name) {
        case 'truncate': {
          // Declares 200 000 bytes, sends about 100 KB, then dies.
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200000' });
          res.write(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`);
          res.write('x'.repeat(100_000), () => res.socket?.destroy());
          return;
        }
        case 'deep': {
          const body = `{"jsonrpc":"2.0","id":${id},"result":{"deep":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}}`;
          res.writeHead(200, { 'content-type': 'application/json' }).end(body);
          return;
        }
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"res');
          return;
        case 'hang':
          return; // never answers
        default: {
          const body = JSON.stringify({
            jsonrpc: '2.0',
            id,
            result: { content: [{ type: 'text', text: 'ok' }] },
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        }
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

const call = (name: string, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});

function rawRequest(port: number, body: string): string {
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
    `accept: application/json, text/event-stream\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Everything the proxy sends on one socket until it closes or stays quiet for `quietMs`. */
function readSocket(socket: Socket, quietMs: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    let timer = setTimeout(() => done(), quietMs);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(() => done(), quietMs);
    });
    socket.on('close', done);
    socket.on('error', done);
  });
}

describe.each([
  ['without policies', {}],
  ['with policies', { tools_filter: ['truncate', 'deep', 'garbage', 'hang', 'ok'] }],
])('broken upstream answers, %s', (_name, overrides: Partial<RunConfigInput>) => {
  let backend: { url: string; close(): Promise<void> };
  let proxy: RunningProxy;
  beforeAll(async () => {
    backend = await startBrokenBackend();
    proxy = await startProxy(
      testConfig({ upstream_timeout: '2s', ...overrides }),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy.close();
    await backend.close();
  });

  it.each(['truncate', 'deep', 'garbage'])('answers %s with a JSON-RPC error and HTTP 502', async (name) => {
    const res = await post(`${proxy.url}/mcp`, call(name, 5));
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32000, message: expect.any(String) },
    });
  });

  it('answers an upstream that never answers with 504 after the upstream timeout', async () => {
    const res = await post(`${proxy.url}/mcp`, call('hang', 6));
    expect(res.status).toBe(504);
    expect(res.json).toMatchObject({ id: 6, error: { message: expect.stringMatching(/within 2000 ms/) } });
  });

  it('never splices the next pipelined response into a broken one', async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(rawRequest(proxy.port, JSON.stringify(call('truncate', 1))));
    socket.write(rawRequest(proxy.port, JSON.stringify(call('ok', 2))));
    const text = await readSocket(socket, 3000);
    const first = /^HTTP\/1\.1 (\d{3})[^]*?content-length: (\d+)\r\n[^]*?\r\n\r\n/i.exec(text);
    expect(first?.[1]).toBe('502');
    const length = Number(first?.[2]);
    const body = text.slice(first?.[0].length ?? 0, (first?.[0].length ?? 0) + length);
    expect(JSON.parse(body)).toMatchObject({ id: 1, error: { code: -32000 } });
    // What follows is either nothing (connection closed) or the second response, whole.
    const rest = text.slice((first?.[0].length ?? 0) + length);
    if (rest !== '') {
      expect(rest).toMatch(/^HTTP\/1\.1 200 /);
      expect(rest).toContain('"id":2');
    }
    expect(text.split('"id":2').length - 1).toBeLessThanOrEqual(1);
  });
});
