/**
 * Rate limits end to end through Moat's proxy to a real MCP server: 429 with Retry-After and
 * `retryAfter` in the JSON-RPC error, per principal and per tool, buckets in memory and in a real
 * Redis shared by two proxy processes, and what happens when that Redis is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV2StatelessBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { memoryLogger, messageOfAnswer, post, testConfig } from '../../support/proxy-harness.js';
import { startProxyProcess, stopProxyProcess, type ProxyProcess } from '../../support/proxy-processes.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

let backend: HttpBackendServer;
let redis: RedisServer;
beforeAll(async () => {
  backend = await startV2StatelessBackend();
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
  await backend?.close();
});

const httpBackend = () => ({
  kind: 'http' as const,
  url: backend.url,
  transport: 'streamable-http' as const,
  remote: false,
});

async function proxyWith(config: Partial<RunConfigInput>): Promise<RunningProxy> {
  return startProxy(testConfig({ stateless: true, ...config }), httpBackend(), {
    logger: memoryLogger().logger,
  });
}

let id = 0;
const echo = (text: string) => ({
  jsonrpc: '2.0',
  id: ++id,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text } },
});
const ping = () => ({ jsonrpc: '2.0', id: ++id, method: 'ping' });
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };

function expectLimited(res: { status: number; headers: Headers; text: string }): void {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  const error = messageOfAnswer(res.text).error as {
    code: number;
    message: string;
    data?: { retryAfter?: number };
  };
  expect(error.message).toMatch(/Rate limit exceeded/);
  expect(error.data?.retryAfter).toBe(retryAfter);
}

describe('memory buckets', () => {
  it('limits a principal, notifications included, with 429 and Retry-After', async () => {
    const proxy = await proxyWith({ rate_limit: { per_principal: { requests_per_minute: 1, burst: 3 } } });
    try {
      const url = `${proxy.url}/mcp`;
      expect((await post(url, ping(), HEADERS)).status).toBe(200);
      // A notification takes a token too: it is no way around the limit.
      const note = await post(
        url,
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
        HEADERS,
      );
      expect(note.status).toBeLessThan(300);
      expect((await post(url, ping(), HEADERS)).status).toBe(200);
      const limited = await post(url, ping(), HEADERS);
      expectLimited(limited);
      expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    } finally {
      await proxy.close();
    }
  });

  it('limits each tool on its own, with per-tool overrides', async () => {
    const proxy = await proxyWith({
      rate_limit: {
        per_tool: { requests_per_minute: 1, burst: 2 },
        tools: { add: { requests_per_minute: 1, burst: 1 } },
      },
    });
    try {
      const url = `${proxy.url}/mcp`;
      expect((await post(url, echo('a'), HEADERS)).status).toBe(200);
      expect((await post(url, echo('b'), HEADERS)).status).toBe(200);
      expectLimited(await post(url, echo('c'), HEADERS));
      const add = (n: number) => ({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'add', arguments: { a: n, b: 1 } },
      });
      expect((await post(url, add(1), HEADERS)).status).toBe(200);
      const limited = await post(url, add(2), HEADERS);
      expectLimited(limited);
      expect(messageOfAnswer(limited.text).error?.message).toMatch(/calls of tool "add"/);
      // Other methods are not limited by the tool rules.
      expect((await post(url, ping(), HEADERS)).status).toBe(200);
    } finally {
      await proxy.close();
    }
  });
});

describe('Redis buckets shared by two proxy processes', () => {
  let a: ProxyProcess;
  let b: ProxyProcess;
  beforeAll(async () => {
    const config = testConfig({
      name: `shared-limit-${Date.now()}`,
      stateless: true,
      scaling_config: { session_redis: { address: redis.address } },
      rate_limit: { per_principal: { requests_per_minute: 1, burst: 4 } },
    });
    [a, b] = await Promise.all([
      startProxyProcess(config, httpBackend()),
      startProxyProcess(config, httpBackend()),
    ]);
  });
  afterAll(async () => {
    await Promise.all([stopProxyProcess(a), stopProxyProcess(b)]);
  });

  it('counts requests to either replica against one bucket', async () => {
    for (const p of [a, b, a, b]) expect((await post(`${p.url}/mcp`, ping(), HEADERS)).status).toBe(200);
    expectLimited(await post(`${a.url}/mcp`, ping(), HEADERS));
    expectLimited(await post(`${b.url}/mcp`, ping(), HEADERS));
  });
});

describe('when Redis is down', () => {
  for (const [failure, status] of [
    ['deny', 503],
    ['allow', 200],
  ] as const) {
    it(`on_store_failure ${failure} answers ${status}`, async () => {
      const own = await startRedis();
      const proxy = await proxyWith({
        scaling_config: { session_redis: { address: own.address } },
        rate_limit: { per_principal: { requests_per_minute: 60 }, on_store_failure: failure },
      });
      try {
        const url = `${proxy.url}/mcp`;
        expect((await post(url, ping(), HEADERS)).status).toBe(200);
        await own.stop();
        const res = await post(url, ping(), HEADERS);
        expect(res.status).toBe(status);
        if (status === 503)
          expect(messageOfAnswer(res.text).error?.message).toMatch(/rate limit store is unavailable/);
      } finally {
        await proxy.close();
        await own.stop();
      }
    });
  }
});
