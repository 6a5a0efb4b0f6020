/**
 * Prometheus `/metrics`: a real Prometheus server scrapes the dedicated diagnostics port and the
 * transport port; with OIDC on, the transport port asks for a token; turned off, it says where
 * the metrics are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TelemetryConfig } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { startPrometheus, type PrometheusServer } from '../../support/prometheus.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';
import { startTracedBackend, type TracedBackend } from './traced-backend.js';

let backend: TracedBackend;
const proxies: RunningProxy[] = [];

beforeAll(async () => {
  backend = await startTracedBackend();
});

afterAll(async () => {
  for (const p of proxies) await p.close();
  await backend?.close();
});

async function proxyWith(
  telemetry: TelemetryConfig,
  extra: Parameters<typeof testConfig>[0] = {},
): Promise<RunningProxy> {
  const proxy = await startProxy(
    testConfig({
      telemetry_config: { enablePrometheusMetricsPath: true, prometheusPort: 0, ...telemetry },
      ...extra,
    }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
  proxies.push(proxy);
  return proxy;
}

async function callEcho(
  proxy: RunningProxy,
  times: number,
  headers: Record<string, string> = {},
): Promise<void> {
  await post(proxy.endpoint, INIT_BODY, headers);
  for (let id = 2; id < 2 + times; id++) {
    const res = await post(
      proxy.endpoint,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {} } },
      headers,
    );
    expect(res.status).toBe(200);
  }
}

const hostPort = (url: string) => new URL(url).host;

describe('Prometheus scrapes /metrics on both ports', () => {
  let prometheus: PrometheusServer;
  let proxy: RunningProxy;

  beforeAll(async () => {
    proxy = await proxyWith({});
    expect(proxy.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    await callEcho(proxy, 3);
    prometheus = await startPrometheus([hostPort(proxy.metricsUrl!), hostPort(proxy.url)]);
  }, 30_000);

  afterAll(async () => {
    await prometheus?.stop();
  });

  it('finds the same operation-duration counts on the diagnostics port and the transport port', async () => {
    const expr = 'mcp_server_operation_duration_count{gen_ai_tool_name="echo"}';
    const samples = await prometheus.waitFor(expr, (s) => s.length === 2);
    expect(samples.map((s) => s.labels.instance).sort()).toEqual(
      [hostPort(proxy.metricsUrl!), hostPort(proxy.url)].sort(),
    );
    for (const s of samples) {
      expect(s.value).toBe(3);
      expect(s.labels.mcp_method_name).toBe('tools/call');
    }
    const up = await prometheus.query('up{job="moat"}');
    expect(up.map((s) => s.value)).toEqual([1, 1]);
  }, 30_000);
});

describe('/metrics on the transport port', () => {
  let idp: TestOidcProvider;

  beforeAll(async () => {
    idp = await startTestOidcProvider([{ id: 'alice' }]);
  });

  afterAll(async () => {
    await idp?.close();
  });

  it('asks for the same token as MCP when OIDC is on; the diagnostics port does not', async () => {
    const proxy = await proxyWith(
      {},
      {
        oidc_config: oidcConfigFor(idp),
      },
    );
    const token = await idp.token('alice');
    await callEcho(proxy, 1, { authorization: `Bearer ${token}` });

    const anonymous = await fetch(`${proxy.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const authenticated = await fetch(`${proxy.url}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(authenticated.status).toBe(200);
    expect(await authenticated.text()).toContain('mcp_server_operation_duration_count');
    const diagnostics = await fetch(proxy.metricsUrl!);
    expect(diagnostics.status).toBe(200);
  }, 30_000);

  it('is a 404 naming the diagnostics port when metricsOnTransportPort is false', async () => {
    const proxy = await proxyWith({ metricsOnTransportPort: false });
    const res = await fetch(`${proxy.url}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/diagnostics port/);
    expect((await fetch(proxy.metricsUrl!)).status).toBe(200);
  });
});
