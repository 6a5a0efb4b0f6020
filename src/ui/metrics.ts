/**
 * The metrics page's data: each workload's proxy serves its own Prometheus `/metrics` on its
 * diagnostics port when run with `--otel-enable-prometheus-metrics-path` (the URL is in its
 * status file, `metrics_url`). The dashboard's server reads that URL every few seconds and keeps
 * the last minutes of differences in memory. Nothing new is exposed: the browser sees only the
 * dashboard's own gated JSON, and only loopback URLs are read (a status file naming another host
 * is not followed).
 */
import { isLoopbackHost } from '../util/net.js';
import { errorMessage } from '../util/errors.js';
import type { WorkloadStore } from '../workloads/store.js';
import { proxyTotals, type ProxyTotals } from './prometheus-text.js';
import type { MetricsPoint, MetricsSnapshot, WorkloadMetrics } from './shared.js';

const INTERVAL_MS = 5000;
/** Ten minutes of intervals. */
const KEPT = 120;
const READ_TIMEOUT_MS = 2000;
/** A proxy's `/metrics` is a few kilobytes; more is not read. */
const MAX_BYTES = 1024 * 1024;

interface Sample {
  at: number;
  totals: ProxyTotals;
}

interface Series {
  samples: Sample[];
  source: WorkloadMetrics['source'];
  problem: string;
}

const NOT_SERVED =
  'its proxy serves no metrics (run it with --otel-enable-prometheus-metrics-path to see them here)';

export class MetricsSampler {
  private readonly series = new Map<string, Series>();
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;

  constructor(private readonly store: WorkloadStore) {}

  start(): void {
    this.timer = setInterval(() => void this.read(), INTERVAL_MS);
    void this.read();
  }

  /** Reads every workload's metrics once (a read still running is not doubled). */
  read(): Promise<void> {
    this.reading ??= this.readAll().finally(() => (this.reading = undefined));
    return this.reading;
  }

  snapshot(): MetricsSnapshot {
    const workloads = [...this.series.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, s]) => view(name, s));
    return { interval_seconds: INTERVAL_MS / 1000, window_seconds: (INTERVAL_MS * KEPT) / 1000, workloads };
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async readAll(): Promise<void> {
    const names = await this.store.workloadNames();
    for (const gone of [...this.series.keys()].filter((n) => !names.includes(n))) this.series.delete(gone);
    await Promise.all(names.map((name) => this.readOne(name)));
  }

  private async readOne(name: string): Promise<void> {
    const series = this.series.get(name) ?? { samples: [], source: 'off', problem: NOT_SERVED };
    this.series.set(name, series);
    const status = await this.store.readStatus(name).catch(() => undefined);
    const url = status?.metrics_url;
    if (!url || !['running', 'unhealthy'].includes(status.status)) {
      Object.assign(series, { source: 'off', problem: url ? 'not running' : NOT_SERVED });
      return;
    }
    try {
      const totals = proxyTotals(await readMetrics(url));
      series.samples.push({ at: Date.now(), totals });
      if (series.samples.length > KEPT + 1) series.samples.shift();
      Object.assign(series, { source: 'on', problem: '' });
    } catch (err) {
      Object.assign(series, { source: 'unreachable', problem: `cannot read ${url}: ${errorMessage(err)}` });
    }
  }
}

/** GET of a loopback `/metrics` URL (a wildcard bind is read on loopback), bounded in time and size. */
async function readMetrics(url: string): Promise<string> {
  const target = new URL(url);
  if (target.hostname === '0.0.0.0') target.hostname = '127.0.0.1';
  if (target.hostname === '[::]') target.hostname = '[::1]';
  if (target.protocol !== 'http:' || !isLoopbackHost(target.hostname))
    throw new Error('the dashboard reads metrics only from loopback http URLs');
  const response = await fetch(target, { redirect: 'error', signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const text = await response.text();
  if (text.length > MAX_BYTES) throw new Error('the answer is larger than 1 MiB');
  return text;
}

function view(name: string, series: Series): WorkloadMetrics {
  const { samples } = series;
  const points: MetricsPoint[] = [];
  for (let i = 1; i < samples.length; i++) {
    const before = samples[i - 1]!.totals;
    const now = samples[i]!.totals;
    // Counters that went down belong to a restarted proxy: its totals are the interval's.
    const from = now.requests < before.requests ? { requests: 0, errors: 0, seconds: 0 } : before;
    const requests = now.requests - from.requests;
    points.push({
      at: new Date(samples[i]!.at).toISOString(),
      requests,
      errors: now.errors - from.errors,
      mean_ms: meanMs(now.seconds - from.seconds, requests),
    });
  }
  const last = samples.at(-1)?.totals ?? { requests: 0, errors: 0, seconds: 0 };
  return {
    name,
    source: series.source,
    problem: series.problem,
    total: { requests: last.requests, errors: last.errors, mean_ms: meanMs(last.seconds, last.requests) },
    points,
  };
}

function meanMs(seconds: number, requests: number): number | null {
  return requests > 0 ? Math.round((seconds / requests) * 10_000) / 10 : null;
}
