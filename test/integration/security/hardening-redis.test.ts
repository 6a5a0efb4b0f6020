/**
 * A frozen Redis (the real redis-server stopped with SIGSTOP by its PID) must not hang the proxy:
 * requests that need the session store fail fast with 503 and a JSON-RPC error, `/health` says the
 * store is stuck (503), and both recover after SIGCONT. Real proxy, real MCP SDK backend.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

let redis: RedisServer;
let backend: HttpBackendServer;
let proxy: RunningProxy;
let frozen = false;

beforeAll(async () => {
  redis = await startRedis();
  backend = await startV1StreamableBackend({ json: true });
  proxy = await startProxy(
    testConfig({ scaling_config: { session_redis: { address: redis.address } } }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
});

afterAll(async () => {
  if (frozen) process.kill(redis.pid, 'SIGCONT');
  await proxy.close();
  await backend.close();
  await redis.stop();
});

async function health(): Promise<{
  status: number;
  body: { status: string; session_store?: { ok: boolean } };
}> {
  const res = await fetch(`${proxy.url}/health`);
  return {
    status: res.status,
    body: (await res.json()) as { status: string; session_store?: { ok: boolean } },
  };
}

it('fails fast with 503 while Redis is frozen and recovers after SIGCONT', async () => {
  const init = await post(`${proxy.url}/mcp`, INIT_BODY);
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '' };
  expect(session['mcp-session-id']).not.toBe('');
  expect(await health()).toMatchObject({
    status: 200,
    body: { status: 'healthy', session_store: { ok: true } },
  });

  process.kill(redis.pid, 'SIGSTOP');
  frozen = true;
  const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
  const stuck = await post(`${proxy.url}/mcp`, ping, session);
  expect(stuck.status).toBe(503);
  expect(stuck.json).toMatchObject({ jsonrpc: '2.0', error: { message: 'Session store unavailable' } });
  expect(await health()).toMatchObject({
    status: 503,
    body: { status: 'unhealthy', session_store: { ok: false } },
  });

  process.kill(redis.pid, 'SIGCONT');
  frozen = false;
  expect(await health()).toMatchObject({ status: 200, body: { status: 'healthy' } });
  const again = await post(`${proxy.url}/mcp`, { ...ping, id: 3 }, session);
  expect(again.status).toBe(200);
  expect(again.json).toMatchObject({ id: 3, result: {} });
});
