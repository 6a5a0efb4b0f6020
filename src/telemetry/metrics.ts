/**
 * The proxy's metrics, recorded from exchange summaries: the MCP conventions' operation duration,
 * policy denials, upstream errors and open sessions.
 */
import { ValueType, type Meter } from '@opentelemetry/api';
import type { ExchangeSummary } from '../mcp/exchange.js';
import { metricAttributes, metricKey } from './attributes.js';
import { DurationHistogram } from './duration-histogram.js';

/** Bucket bounds of the MCP conventions' duration histograms (seconds). */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

export interface ProxyMetrics {
  record(summary: ExchangeSummary, error: string | undefined): void;
}

/** The operation-duration histogram, which the metric readers collect as a producer. */
export function durationHistogram(scope: string): DurationHistogram {
  return new DurationHistogram(
    {
      name: 'mcp.server.operation.duration',
      unit: 's',
      description:
        'MCP request or notification duration as observed by the proxy, from receipt to the end of the answer',
      valueType: ValueType.DOUBLE,
    },
    DURATION_BUCKETS,
    scope,
  );
}

export function proxyMetrics(meter: Meter, duration: DurationHistogram): ProxyMetrics {
  const denials = meter.createCounter('moat.policy.denials', {
    description: 'MCP messages a policy refused, by policy',
  });
  const upstreamErrors = meter.createCounter('moat.upstream.errors', {
    description: 'Exchanges the MCP server (or the way to it) failed with an HTTP 5xx',
  });
  const sessions = meter.createUpDownCounter('mcp.server.sessions.active', {
    description: 'MCP sessions opened through the proxy and not yet ended by the client (expiry is not seen)',
  });

  return {
    record(summary, error) {
      const { record } = summary;
      if (record.method !== undefined) {
        duration.record((summary.ended - summary.started) / 1000, metricKey(summary, error), () =>
          metricAttributes(summary, error),
        );
      }
      if (record.deniedBy !== undefined) {
        denials.add(1, {
          'moat.policy': record.deniedBy,
          'mcp.method.name': record.method ?? summary.httpMethod,
        });
      } else if (summary.status >= 500) {
        upstreamErrors.add(1, { 'http.response.status_code': summary.status });
      }
      if (record.sessionId !== undefined && summary.status < 300) {
        if (record.method === 'initialize') sessions.add(1);
        else if (summary.httpMethod === 'DELETE') sessions.add(-1);
      }
    },
  };
}
