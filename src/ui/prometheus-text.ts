/**
 * The few numbers the metrics page needs from a proxy's Prometheus `/metrics` text: the
 * operation-duration histogram's count and sum, and the count of operations that carry an
 * `error_type` (failures, refusals and tool errors, docs/telemetry.md "Metrics").
 */

export interface ProxyTotals {
  /** MCP requests and notifications the proxy answered since it started. */
  requests: number;
  /** Those of them that failed (`error_type` set). */
  errors: number;
  /** Their summed duration, in seconds. */
  seconds: number;
}

const SAMPLE = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const ERROR_LABEL = /(?:^|,)\s*error_type="(?:[^"\\]|\\.)+"/;
const HISTOGRAM = 'mcp_server_operation_duration';

export function proxyTotals(text: string): ProxyTotals {
  const totals: ProxyTotals = { requests: 0, errors: 0, seconds: 0 };
  for (const line of text.split('\n')) {
    if (!line.startsWith(HISTOGRAM)) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    if (match[1] === `${HISTOGRAM}_count`) {
      totals.requests += value;
      if (ERROR_LABEL.test(match[2] ?? '')) totals.errors += value;
    } else if (match[1] === `${HISTOGRAM}_sum`) {
      totals.seconds += value;
    }
  }
  return totals;
}
