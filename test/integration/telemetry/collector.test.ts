/**
 * Telemetry against a real OpenTelemetry Collector: spans named and attributed by the MCP
 * conventions, the client's trace continued through Moat into an HTTP backend that traces too,
 * metric points, and sampling at 0, 1 and 0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TelemetryConfig } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startCollector, type CollectedSpan, type Collector } from '../../support/otel-collector.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';
import { startTracedBackend, type TracedBackend } from './traced-backend.js';

let collector: Collector;
let backend: TracedBackend;

beforeAll(async () => {
  collector = await startCollector();
  backend = await startTracedBackend(collector.endpoint);
}, 30_000);

afterAll(async () => {
  await backend?.close();
  await collector?.stop();
});

async function proxyWith(name: string, telemetry: TelemetryConfig): Promise<RunningProxy> {
  return startProxy(
    testConfig({
      name,
      env_vars: { REGION: 'eu-west-1' },
      telemetry_config: { endpoint: collector.endpoint, ...telemetry },
    }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
}

const spansOf = (service: string): CollectedSpan[] => collector.spans().filter((s) => s.service === service);

const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const META_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const META_SPAN = '00f067aa0ba902b7';

describe('spans and metrics reach a real collector', () => {
  let spans: CollectedSpan[];
  let sent: Array<{ headers: Record<string, unknown>; body: Record<string, unknown> }>;

  beforeAll(async () => {
    const proxy = await proxyWith('traced', {
      samplingRate: '1',
      useLegacyAttributes: true,
      environmentVariables: ['REGION'],
      customAttributes: { team: 'platform' },
    });
    const before = backend.seen.length;
    try {
      const init = await post(proxy.endpoint, INIT_BODY);
      const session = init.headers.get('mcp-session-id') ?? '';
      const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
      await post(proxy.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
      await post(
        proxy.endpoint,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
        { ...headers, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      );
      await post(
        proxy.endpoint,
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'fail', _meta: { traceparent: `00-${META_TRACE}-${META_SPAN}-01` } },
        },
        { ...headers, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      );
    } finally {
      await proxy.close(); // flushes spans and metrics
    }
    sent = backend.seen.slice(before);
    spans = await collector.waitFor('the four MCP spans of the traced proxy', (c) => {
      const s = c.spans().filter((x) => x.service === 'moat-traced');
      return s.length >= 4 ? s : undefined;
    });
  }, 60_000);

  it('names each span {mcp.method.name} {target}, kind server, with the MCP attributes', () => {
    expect(spans.map((s) => s.name).sort()).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/call echo',
      'tools/call fail',
    ]);
    const echo = spans.find((s) => s.name === 'tools/call echo')!;
    expect(echo.kind).toBe('Server');
    expect(echo.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '2',
      'http.response.status_code': '200',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'network.protocol.version': '1.1',
      'environment.REGION': 'eu-west-1',
      // legacy names
      'mcp.method': 'tools/call',
      'mcp.tool.name': 'echo',
    });
    expect(echo.attributes['mcp.session.id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(echo.attributes['client.port']).toMatch(/^\d+$/);
    expect(echo.attributes['error.type']).toBeUndefined();
    // initialize carries no header yet: the version the server agreed to.
    const init = spans.find((s) => s.name === 'initialize')!;
    expect(init.attributes['mcp.protocol.version']).toBe('2025-11-25');
  });

  it('marks a tool result with isError as a failure', () => {
    const fail = spans.find((s) => s.name === 'tools/call fail')!;
    expect(fail.attributes['error.type']).toBe('tool_error');
  });

  it("continues the client's trace: traceparent header, params._meta winning over it", () => {
    const echo = spans.find((s) => s.name === 'tools/call echo')!;
    expect(echo.traceId).toBe(CLIENT_TRACE);
    expect(echo.parentId).toBe(CLIENT_SPAN);
    const fail = spans.find((s) => s.name === 'tools/call fail')!;
    expect(fail.traceId).toBe(META_TRACE);
    expect(fail.parentId).toBe(META_SPAN);
    const init = spans.find((s) => s.name === 'initialize')!;
    expect(init.parentId).toBe('');
  });

  it("propagates Moat's span to the HTTP backend (header and params._meta), whose spans join the trace", async () => {
    const echo = spans.find((s) => s.name === 'tools/call echo')!;
    const call = sent.find((r) => (r.body.params as { name?: string } | undefined)?.name === 'echo')!;
    const expected = `00-${CLIENT_TRACE}-${echo.id}-01`;
    expect(call.headers.traceparent).toBe(expected);
    expect((call.body.params as { _meta: { traceparent: string } })._meta.traceparent).toBe(expected);
    const backendSpan = await collector.waitFor('the backend span of the echo call', (c) =>
      c.spans().find((s) => s.service === 'traced-backend' && s.parentId === echo.id),
    );
    expect(backendSpan.traceId).toBe(CLIENT_TRACE);
    expect(backendSpan.name).toBe('backend tools/call');
  });

  it('exports the operation-duration histogram, failures by error.type', async () => {
    const points = await collector.waitFor('mcp.server.operation.duration points', (c) => {
      const p = c.points().filter((x) => x.metric === 'mcp.server.operation.duration');
      return p.some((x) => x.attributes['gen_ai.tool.name'] === 'fail') ? p : undefined;
    });
    const echo = points.find((p) => p.attributes['gen_ai.tool.name'] === 'echo')!;
    expect(echo.value).toBeGreaterThanOrEqual(1);
    expect(echo.attributes['error.type']).toBeUndefined();
    const fail = points.find((p) => p.attributes['gen_ai.tool.name'] === 'fail')!;
    expect(fail.attributes['error.type']).toBe('tool_error');
    const sessions = collector.points().find((p) => p.metric === 'mcp.server.sessions.active');
    expect(sessions?.value).toBe(1);
  });
});

describe('sampling (parent-based, ratio for new traces)', () => {
  async function sendPings(proxy: RunningProxy, count: number): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const id = next++;
        const res = await post(proxy.endpoint, { jsonrpc: '2.0', id, method: 'ping' });
        if (res.status !== 200) throw new Error(`ping ${id}: HTTP ${res.status}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
  }

  it('rate 0 sends no span, rate 1 every span, rate 0.1 about a tenth of 2000', async () => {
    const none = await proxyWith('rate-zero', { samplingRate: '0', metricsEnabled: false });
    await sendPings(none, 50);
    await none.close();

    const all = await proxyWith('rate-one', { samplingRate: '1', metricsEnabled: false });
    await sendPings(all, 50);
    await all.close();
    await collector.waitFor('50 spans at rate 1', (c) =>
      c.spans().filter((s) => s.service === 'moat-rate-one').length >= 50 ? true : undefined,
    );
    expect(spansOf('moat-rate-one')).toHaveLength(50);
    // Exported before rate-one's spans (closed first), so anything it sent has arrived.
    expect(spansOf('moat-rate-zero')).toHaveLength(0);

    const tenth = await proxyWith('rate-tenth', { samplingRate: '0.1', metricsEnabled: false });
    await sendPings(tenth, 2000);
    await tenth.close();
    // A marker after the sampled spans: once its span arrived, so did theirs.
    const marker = await proxyWith('rate-marker', { samplingRate: '1', metricsEnabled: false });
    await sendPings(marker, 1);
    await marker.close();
    await collector.waitFor('the marker span', (c) =>
      c.spans().some((s) => s.service === 'moat-rate-marker') ? true : undefined,
    );
    // Binomial(n = 2000, p = 0.1): mean 200, standard deviation 13.4; ±5 deviations
    // (133..267) fail a correct sampler less than once in a million runs.
    const sampled = spansOf('moat-rate-tenth').length;
    expect(sampled).toBeGreaterThanOrEqual(133);
    expect(sampled).toBeLessThanOrEqual(267);
  }, 120_000);
});
