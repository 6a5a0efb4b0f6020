/**
 * The metrics page: requests, errors and mean latency per workload over the last minutes, from
 * each proxy's own Prometheus metrics as the dashboard's server reads them; a bar chart per
 * workload (errors at the foot of each bar). Refreshed at the server's reading interval.
 */
import type { MetricsSnapshot, WorkloadMetrics } from '../shared.js';
import { getJson } from './api.js';
import { barChart } from './chart.js';
import { el, localLink } from './dom.js';

const COLUMNS = [
  'Workload',
  'Requests',
  'Errors',
  'Mean latency',
  'Since the proxy started',
  'Requests per interval',
];

export function metricsPage(main: HTMLElement): void {
  const status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  const body = el('tbody');
  const caption = el('caption');
  const table = el(
    'table',
    { 'aria-label': 'Metrics per workload' },
    caption,
    el('thead', {}, el('tr', {}, ...COLUMNS.map((c) => el('th', { scope: 'col' }, c)))),
    body,
  );
  main.append(status, table);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const refresh = async () => {
    const answer = await getJson<MetricsSnapshot>('/api/metrics');
    if (!answer.ok) status.textContent = `Could not read the metrics: ${answer.message}`;
    else {
      const snapshot = answer.value;
      const minutes = Math.round(snapshot.window_seconds / 60);
      caption.textContent = `The last ${minutes} minutes since the dashboard started, read every ${snapshot.interval_seconds} s from each proxy's /metrics`;
      status.textContent = '';
      body.replaceChildren(
        ...(snapshot.workloads.length
          ? snapshot.workloads.map((w) => rowElement(w, snapshot.window_seconds / snapshot.interval_seconds))
          : [el('tr', {}, el('td', { colspan: String(COLUMNS.length) }, 'No workloads.'))]),
      );
      main.dataset.state = 'live';
    }
    clearTimeout(timer);
    timer = setTimeout(() => void refresh(), (answer.ok ? answer.value.interval_seconds : 5) * 1000);
  };
  void refresh();
}

function rowElement(w: WorkloadMetrics, slots: number): HTMLTableRowElement {
  const name = el('th', { scope: 'row' }, localLink(`/workloads/${encodeURIComponent(w.name)}`, w.name));
  if (w.source !== 'on')
    return el(
      'tr',
      { 'data-workload': w.name, 'data-state': w.source },
      name,
      el(
        'td',
        { colspan: String(COLUMNS.length - 1), class: w.source === 'off' ? 'muted' : 'problem' },
        w.problem,
      ),
    );
  const requests = w.points.reduce((n, p) => n + p.requests, 0);
  const errors = w.points.reduce((n, p) => n + p.errors, 0);
  const timed = w.points.filter((p) => p.mean_ms !== null);
  const mean = requests ? timed.reduce((sum, p) => sum + (p.mean_ms ?? 0) * p.requests, 0) / requests : null;
  const chart = barChart(
    w.points.map((p) => ({ value: p.requests, part: p.errors })),
    slots,
    `${w.name}: ${plural(requests, 'request')} and ${plural(errors, 'error')} in the last ${plural(w.points.length, 'interval')}`,
  );
  return el(
    'tr',
    { 'data-workload': w.name, 'data-state': 'on' },
    name,
    el('td', { class: 'requests' }, String(requests)),
    el('td', { class: errors ? 'errors state state-error' : 'errors' }, String(errors)),
    el('td', { class: 'latency' }, ms(mean)),
    el(
      'td',
      { class: 'total' },
      `${plural(w.total.requests, 'request')}, ${plural(w.total.errors, 'error')}, mean ${ms(w.total.mean_ms)}`,
    ),
    el('td', {}, chart),
  );
}

function ms(value: number | null): string {
  if (value === null) return '-';
  return value < 10 ? `${value.toFixed(1)} ms` : `${Math.round(value)} ms`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
