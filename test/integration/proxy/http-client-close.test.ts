/**
 * A client closing its GET stream before the backend answered is normal: the proxy aborts the
 * upstream request and logs it at debug level, never as a failed request (error level).
 * The backend is a plain node:http server that holds GET requests without sending headers, as
 * servers do that only flush headers with their first event.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';

let backend: Server;
let proxy: RunningProxy;
const held: IncomingMessage[] = [];
const log = memoryLogger();

beforeAll(async () => {
  backend = createServer((req) => held.push(req));
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const url = `http://127.0.0.1:${(backend.address() as AddressInfo).port}/mcp`;
  proxy = await startProxy(
    testConfig(),
    { kind: 'http', url, transport: 'streamable-http', remote: false },
    { logger: log.logger },
  );
});
afterAll(async () => {
  await proxy.close();
  backend.closeAllConnections();
  backend.close();
});

it('logs a client closing a pending GET stream at debug level, not as an error', async () => {
  const client = request(`${proxy.url}/mcp`, { method: 'GET', headers: { accept: 'text/event-stream' } });
  client.on('error', () => {});
  client.end();
  // The backend holds the request; then the client goes away.
  await expect.poll(() => held.length, { timeout: 20_000 }).toBe(1);
  const upstream = held[0]!;
  upstream.on('error', () => {});
  const upstreamClosed = new Promise((resolve) => upstream.once('close', resolve));
  client.destroy();
  // The proxy aborts its upstream request in turn.
  await upstreamClosed;
  await expect
    .poll(() => log.lines.some((l) => l.includes('client closed the connection')), { timeout: 20_000 })
    .toBe(true);
  const entries = log.lines.map((l) => JSON.parse(l) as { level: number; msg: string });
  expect(entries.filter((e) => e.level >= 50)).toEqual([]);
  expect(entries.find((e) => e.msg.includes('client closed the connection'))?.level).toBe(20);
});
