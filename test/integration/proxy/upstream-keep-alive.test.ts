/**
 * The proxy's upstream connection pool against a backend that closes idle connections soon
 * (200 ms here; Node's own default is 5 s) and announces no `Keep-Alive: timeout` (the SDK's SSE
 * answers set `Connection: keep-alive` themselves, so Node adds no hint). Requests spaced around
 * that timeout must never go out on a connection the backend is closing: no 502. (Main's pool,
 * which kept idle connections 60 s unless told otherwise, failed 25 of these 360 calls.)
 */
import { describe, expect, it } from 'vitest';
import { startProxy } from '../../../src/proxy/index.js';
import { startV2StreamableBackend } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

const BACKEND_IDLE_MS = 200;
/** Requests per round, in parallel: each round reuses (or replaces) that many pooled connections. */
const PARALLEL = 6;
/** Pauses between rounds sweep across the backend's idle timeout, in 1 ms steps. */
const PAUSES_MS = Array.from({ length: 60 }, (_, i) => BACKEND_IDLE_MS - 30 + i);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('upstream keep-alive against a backend that closes idle connections after 200 ms', () => {
  it('answers every call with requests spaced around the timeout', async () => {
    const backend = await startV2StreamableBackend({ keepAliveMs: BACKEND_IDLE_MS });
    const proxy = await startProxy(
      testConfig(),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
    try {
      await callsAroundTheTimeout(`${proxy.url}/mcp`);
    } finally {
      await proxy.close();
      await backend.close();
    }
  });
});

async function callsAroundTheTimeout(url: string): Promise<void> {
  const init = await post(url, INIT_BODY);
  expect(init.status).toBe(200);
  const sessionId = init.headers.get('mcp-session-id') ?? '';
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
  expect((await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(
    202,
  );

  let id = 1;
  const call = () =>
    post(
      url,
      { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      headers,
    );
  const round = () => Promise.all(Array.from({ length: PARALLEL }, call));
  // The backend closes a first round's idle connections long before the next round: the pool
  // learns its timeout from that (the one close it cannot foresee, as nothing announced it).
  expect((await round()).map((r) => r.status)).toEqual(Array<number>(PARALLEL).fill(200));
  await sleep(3 * BACKEND_IDLE_MS);

  const statuses = new Map<number, number>();
  for (const pause of PAUSES_MS) {
    await sleep(pause);
    for (const r of await round()) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  }
  expect(Object.fromEntries(statuses)).toEqual({ 200: PAUSES_MS.length * PARALLEL });
}
