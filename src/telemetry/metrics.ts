/**
 * The proxy's metrics, recorded from exchange facts: the MCP conventions' operation duration,
 * policy denials, upstream errors, open sessions and guardrail findings.
 */
import { ValueType, type Meter } from '@opentelemetry/api';
import { sessionChange, type ExchangeFacts } from './attributes.js';
import { DurationHistogram } from './duration-histogram.js';

/** Bucket bounds of the MCP conventions' duration histograms (seconds). */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

export interface ProxyMetrics {
  /** Counts what the exchange changes: denials, upstream errors, open sessions, guardrail findings. */
  count(facts: ExchangeFacts): void;
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

export function proxyMetrics(meter: Meter): ProxyMetrics {
  const denials = meter.createCounter('moat.policy.denials', {
    description: 'MCP messages a policy refused, by policy',
  });
  const upstreamErrors = meter.createCounter('moat.upstream.errors', {
    description: 'Exchanges the MCP server (or the way to it) failed with an HTTP 5xx',
  });
  const guardrails = meter.createCounter('moat.guardrail.findings', {
    description: 'Secrets and personal data the guardrails found, by detector, direction and action',
  });
  const sessions = meter.createUpDownCounter('mcp.server.sessions.active', {
    description: 'MCP sessions opened through the proxy and not yet ended by the client (expiry is not seen)',
  });

  return {
    count(f) {
      if (f.deniedBy !== undefined) {
        denials.add(1, { 'moat.policy': f.deniedBy, 'mcp.method.name': f.method ?? f.httpMethod });
      } else if (f.status >= 500) {
        upstreamErrors.add(1, { 'http.response.status_code': f.status });
      }
      for (const found of f.guardrails ?? []) {
        guardrails.add(1, {
          'moat.guardrail.detector': found.detector,
          'moat.guardrail.direction': found.direction,
          'moat.guardrail.action': found.action,
        });
      }
      const change = sessionChange(f);
      if (change !== 0) sessions.add(change);
    },
  };
}
