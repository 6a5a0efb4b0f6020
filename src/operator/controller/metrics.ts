/**
 * Counters, gauges and histograms rendered in the Prometheus text exposition format (version
 * 0.0.4). The format is small and stable, so a few lines here replace a metrics dependency.
 */

type Labels = Record<string, string>;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length ? `{${pairs.join(',')}}` : '';
}

function numberText(n: number): string {
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return Number.isNaN(n) ? 'NaN' : String(n);
}

interface Metric {
  render(): string[];
}

abstract class Family<S> implements Metric {
  protected readonly series = new Map<string, { labels: Labels; value: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
  ) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`invalid metric name: ${name}`);
  }

  protected entry(labels: Labels, initial: () => S): { labels: Labels; value: S } {
    const id = JSON.stringify(Object.entries(labels).sort());
    let found = this.series.get(id);
    if (!found) this.series.set(id, (found = { labels, value: initial() }));
    return found;
  }

  render(): string[] {
    return [
      `# HELP ${this.name} ${escapeHelp(this.help)}`,
      `# TYPE ${this.name} ${this.type}`,
      ...this.samples(),
    ];
  }

  protected abstract samples(): string[];
}

export class Counter extends Family<number> {
  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }

  inc(labels: Labels = {}, by = 1): void {
    this.entry(labels, () => 0).value += by;
  }

  get(labels: Labels = {}): number {
    return this.entry(labels, () => 0).value;
  }

  protected samples(): string[] {
    return [...this.series.values()].map((s) => `${this.name}${labelText(s.labels)} ${numberText(s.value)}`);
  }
}

export class Gauge extends Family<number | (() => number)> {
  constructor(name: string, help: string) {
    super(name, help, 'gauge');
  }

  set(value: number, labels: Labels = {}): void {
    this.entry(labels, () => 0).value = value;
  }

  /** The value is read when the metrics are rendered (e.g. a queue's depth). */
  collect(read: () => number, labels: Labels = {}): void {
    this.entry(labels, () => read).value = read;
  }

  protected samples(): string[] {
    return [...this.series.values()].map((s) => {
      const value = typeof s.value === 'function' ? s.value() : s.value;
      return `${this.name}${labelText(s.labels)} ${numberText(value)}`;
    });
  }
}

interface HistogramState {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Family<HistogramState> {
  constructor(
    name: string,
    help: string,
    private readonly buckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  ) {
    super(name, help, 'histogram');
  }

  observe(value: number, labels: Labels = {}): void {
    const state = this.entry(labels, () => ({ counts: this.buckets.map(() => 0), sum: 0, count: 0 })).value;
    this.buckets.forEach((upper, i) => {
      if (value <= upper) state.counts[i]!++;
    });
    state.sum += value;
    state.count++;
  }

  protected samples(): string[] {
    return [...this.series.values()].flatMap(({ labels, value }) => [
      ...this.buckets.map(
        (upper, i) =>
          `${this.name}_bucket${labelText({ ...labels, le: numberText(upper) })} ${value.counts[i]}`,
      ),
      `${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${value.count}`,
      `${this.name}_sum${labelText(labels)} ${numberText(value.sum)}`,
      `${this.name}_count${labelText(labels)} ${value.count}`,
    ]);
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];

  register<M extends Metric>(metric: M): M {
    this.metrics.push(metric);
    return metric;
  }

  render(): string {
    return `${this.metrics.flatMap((m) => m.render()).join('\n')}\n`;
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * The controller metrics, labelled by controller: one set can serve every controller of a process,
 * so a single /metrics shows them all.
 */
export function controllerMetrics(version: string) {
  const registry = new Registry();
  const metrics = {
    registry,
    reconciles: registry.register(
      new Counter(
        'moat_operator_reconcile_total',
        'Reconciles by controller and result (success, requeue, error).',
      ),
    ),
    duration: registry.register(
      new Histogram('moat_operator_reconcile_duration_seconds', 'Time one reconcile took, by controller.'),
    ),
    depth: registry.register(new Gauge('moat_operator_workqueue_depth', 'Keys waiting in the work queue.')),
    retries: registry.register(
      new Counter(
        'moat_operator_workqueue_retries_total',
        'Keys put back in the queue with backoff after a failure.',
      ),
    ),
    leader: registry.register(new Gauge('moat_operator_leader', '1 while this instance leads, else 0.')),
    buildInfo: registry.register(
      new Gauge('moat_operator_build_info', 'Always 1; the labels say what runs.'),
    ),
  };
  metrics.buildInfo.set(1, { version, node: process.version });
  return metrics;
}

export type ControllerMetrics = ReturnType<typeof controllerMetrics>;
