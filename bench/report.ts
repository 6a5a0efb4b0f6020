/**
 * The bench report's pieces: the cell table, the target table and the SVG plots (throughput and
 * p50 against concurrency), all generated from the run's own numbers.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Row, TargetResult } from './bench-types.js';
import { lineChart, type Series } from './svg-chart.js';

export const fmt = (n: number, digits = 2) => n.toFixed(digits);

export function rowTable(rows: Row[]): string[] {
  const lines = [
    '| path | concurrency | direct req/s | proxied req/s | throughput ratio | direct p50 / p99 (ms) | proxied p50 / p99 (ms) | p50 ratio | p99 ratio |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.path} | ${r.concurrency} | ${fmt(r.direct.rps, 0)} | ${fmt(r.proxied.rps, 0)} | ${fmt(r.proxied.rps / r.direct.rps)}× | ` +
        `${fmt(r.direct.p50Ms, 3)} / ${fmt(r.direct.p99Ms, 3)} | ${fmt(r.proxied.p50Ms, 3)} / ${fmt(r.proxied.p99Ms, 3)} | ` +
        `${fmt(r.proxied.p50Ms / r.direct.p50Ms)}× | ${fmt(r.proxied.p99Ms / r.direct.p99Ms)}× |`,
    );
  }
  return lines;
}

export function targetTable(targets: TargetResult[]): string[] {
  const verdict = (met: boolean | undefined) =>
    met === undefined ? '(no target)' : met ? 'met' : '**missed**';
  return [
    '| target | measured | |',
    '|---|---|---|',
    ...targets.map((t) => `| ${t.target} | ${t.measured} | ${verdict(t.met)} |`),
  ];
}

/** A plotted line: the direct or the proxied side of the rows with this path. */
export interface PlotLine {
  name: string;
  path: string;
  side: 'direct' | 'proxied';
}

/**
 * docs/perf-throughput.svg and docs/perf-p50.svg: req/s and p50 against concurrency for each
 * line that has rows (a line with no rows, e.g. a cell module that is absent, is left out).
 * Returns the files written.
 */
export function writePlots(rows: Row[], lines: PlotLine[], dir: string, subtitle: string): string[] {
  const concurrencies = [...new Set(rows.map((r) => r.concurrency))].sort((a, b) => a - b);
  const series = (pick: (r: Row['direct']) => number): Series[] =>
    lines
      .map((line) => ({
        name: line.name,
        values: concurrencies.map((c) => {
          const row = rows.find((r) => r.path === line.path && r.concurrency === c);
          return row ? pick(row[line.side]) : undefined;
        }),
      }))
      .filter((s) => s.values.some((v) => v !== undefined));
  const files = [
    {
      file: join(dir, 'perf-throughput.svg'),
      chart: {
        title: `tools/call throughput (${subtitle})`,
        yLabel: 'requests per second',
        pick: (r: Row['direct']) => r.rps,
      },
    },
    {
      file: join(dir, 'perf-p50.svg'),
      chart: {
        title: `tools/call median latency (${subtitle})`,
        yLabel: 'p50 (ms)',
        pick: (r: Row['direct']) => r.p50Ms,
        logY: true,
      },
    },
  ];
  for (const { file, chart } of files) {
    writeFileSync(
      file,
      lineChart({
        title: chart.title,
        xLabel: 'concurrency (requests in flight)',
        yLabel: chart.yLabel,
        xs: concurrencies,
        series: series(chart.pick),
        ...(chart.logY ? { logY: true } : {}),
      }),
    );
  }
  return files.map((f) => f.file);
}
