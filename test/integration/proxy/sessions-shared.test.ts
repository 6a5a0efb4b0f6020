/**
 * Two proxy processes sharing one Redis serve one session: initialize through A, call through B,
 * end through B, and A then answers 404. Works for streamable HTTP and for legacy SSE message POSTs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, messagesOf, post, testConfig } from '../../support/proxy-harness.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { startProxyProcess, stopProxyProcess, type ProxyProcess } from '../../support/proxy-processes.js';

function startProxy(redis: RedisServer, backend: HttpBackendServer): Promise<ProxyProcess> {
  const config = testConfig({ scaling_config: { session_redis: { address: redis.address } } });
  return startProxyProcess(config, {
    kind: 'http',
    url: backend.url,
    transport: 'streamable-http',
    remote: false,
  });
}

const stop = stopProxyProcess;

describe('two proxy processes sharing one Redis', () => {
  let redis: RedisServer;
  let backend: HttpBackendServer;
  let a: ProxyProcess;
  let b: ProxyProcess;
  beforeAll(async () => {
    redis = await startRedis();
    backend = await startV1StreamableBackend({ json: true });
    [a, b] = await Promise.all([startProxy(redis, backend), startProxy(redis, backend)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([stop(a), stop(b)]);
    await backend.close();
    await redis.stop();
  });

  it('initializes on A, calls on B, ends on B; A then answers 404', async () => {
    expect(a.url).not.toBe(b.url);
    const init = await post(`${a.url}/mcp`, INIT_BODY);
    expect(init.status).toBe(200);
    const sessionId = init.headers.get('mcp-session-id') as string;
    expect(sessionId).toBeTruthy();
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };

    const initialized = await post(
      `${b.url}/mcp`,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      headers,
    );
    expect(initialized.status).toBe(202);
    const call = await post(
      `${b.url}/mcp`,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } },
      headers,
    );
    expect(call.status).toBe(200);
    expect(messagesOf(call)[0]).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: '3' }] } });

    const end = await fetch(`${b.url}/mcp`, { method: 'DELETE', headers });
    expect(end.status).toBeLessThan(300);
    const after = await post(`${a.url}/mcp`, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers);
    expect(after.status).toBe(404);
    expect(after.json).toMatchObject({ error: { code: -32001, message: 'Session not found' } });
  });
});
