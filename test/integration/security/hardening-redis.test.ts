/**
 * A frozen Redis (the real redis-server stopped with SIGSTOP by its PID) must not hang the proxy:
 * requests that need the session store fail fast with 503 and a JSON-RPC error, `/health` says the
 * store is stuck (503), and both recover after SIGCONT. The bound is
 * `scaling_config.session_redis.command_timeout`, and it covers every Redis user: the session
 * store, the rate limiter and the tool pin store. Real proxies, real MCP SDK backend.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

/** The configured bound on one Redis command (the default is 2 s). */
const COMMAND_TIMEOUT_MS = 500;

let redis: RedisServer;
let backend: HttpBackendServer;
let proxy: RunningProxy;
let rateLimited: RunningProxy;
let pinned: RunningProxy;
let frozen = false;

function startBehindRedis(overrides: Partial<RunConfigInput> = {}): Promise<RunningProxy> {
  return startProxy(
    testConfig({
      scaling_config: {
        session_redis: { address: redis.address, command_timeout: `${COMMAND_TIMEOUT_MS}ms` },
      },
      ...overrides,
    }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
}

beforeAll(async () => {
  redis = await startRedis();
  backend = await startV1StreamableBackend({ json: true });
  proxy = await startBehindRedis();
  // Stateless, so only the rate limiter (or the pin store) needs Redis on a call.
  rateLimited = await startBehindRedis({
    stateless: true,
    rate_limit: { per_principal: { requests_per_minute: 600 } },
  });
  pinned = await startBehindRedis({ stateless: true, tool_pinning: { mode: 'enforce' } });
});

afterAll(async () => {
  if (frozen) process.kill(redis.pid, 'SIGCONT');
  await proxy?.close();
  await rateLimited?.close();
  await pinned?.close();
  await backend?.close();
  await redis?.stop();
});

async function health(): Promise<{
  status: number;
  body: { status: string; session_store?: { ok: boolean; error?: string } };
}> {
  const res = await fetch(`${proxy.url}/health`);
  return {
    status: res.status,
    body: (await res.json()) as { status: string; session_store?: { ok: boolean; error?: string } },
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
  const unhealthy = await health();
  expect(unhealthy).toMatchObject({
    status: 503,
    body: { status: 'unhealthy', session_store: { ok: false } },
  });
  expect(unhealthy.body.session_store?.error).toContain(
    `Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`,
  );

  // The rate limiter and the pin store are bounded the same way: an error, never a hang.
  const call = {
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'x' } },
  };
  const limited = await post(`${rateLimited.url}/mcp`, call);
  expect(limited.status).toBe(503);
  expect(limited.json).toMatchObject({
    id: 4,
    error: { message: 'The rate limit store is unavailable; try again later' },
  });
  const refused = await post(`${pinned.url}/mcp`, { ...call, id: 5 });
  expect(refused.json).toMatchObject({ id: 5, error: { message: 'Tool pins are unavailable' } });

  process.kill(redis.pid, 'SIGCONT');
  frozen = false;
  expect(await health()).toMatchObject({ status: 200, body: { status: 'healthy' } });
  const again = await post(`${proxy.url}/mcp`, { ...ping, id: 3 }, session);
  expect(again.status).toBe(200);
  expect(again.json).toMatchObject({ id: 3, result: {} });
});
