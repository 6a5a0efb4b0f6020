import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import type { ExchangeSummary } from '../mcp/exchange.js';
import { exchangeFacts } from './attributes.js';
import { proxyMetrics } from './metrics.js';

/** A reader the test collects from itself (the SDK's own, no export). */
class CollectingReader extends MetricReader {
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

function summary(record: ExchangeSummary['record']): ExchangeSummary {
  return {
    httpMethod: 'POST',
    path: '/mcp',
    status: 200,
    started: 1000,
    ended: 1010,
    identity: { subject: 'u', groups: [], claims: {}, local: true },
    clientAddress: '127.0.0.1',
    transport: 'streamable-http',
    responseBytes: 10,
    record,
  };
}

describe('guardrail findings', () => {
  it('are counted by detector, direction and action, never by where they were', async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const metrics = proxyMetrics(provider.getMeter('test'));
    const finding = {
      detector: 'email',
      direction: 'to_client',
      action: 'redact',
      path: 'resources/read result',
    } as const;
    metrics.count(
      exchangeFacts(
        summary({ method: 'resources/read', guardrailFindings: [finding, { ...finding, path: 'x' }] }),
      ),
    );
    metrics.count(exchangeFacts(summary({ method: 'tools/call' })));
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics[0]?.metrics.find(
      (m) => m.descriptor.name === 'moat.guardrail.findings',
    );
    expect(metric?.dataPoints).toEqual([
      expect.objectContaining({
        value: 2,
        attributes: {
          'moat.guardrail.detector': 'email',
          'moat.guardrail.direction': 'to_client',
          'moat.guardrail.action': 'redact',
        },
      }),
    ]);
    await provider.shutdown();
  });
});
