/**
 * A line chart as a standalone SVG string, for the bench's plots (docs/perf-*.svg): x is
 * categorical (the concurrency levels, evenly spaced), y linear or logarithmic. No dependency.
 */

export interface Series {
  name: string;
  /** One value per x; NaN or undefined leaves a gap. */
  values: Array<number | undefined>;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  xs: Array<string | number>;
  series: Series[];
  logY?: boolean;
}

const WIDTH = 720;
const HEIGHT = 420;
const PLOT = { left: 80, right: 250, top: 50, bottom: 60 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf'];

const escape = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** Round tick values: 1-2-5 steps (linear) or powers of ten (log). */
function ticks(min: number, max: number, logY: boolean): number[] {
  if (logY) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
    return out;
  }
  const raw = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = 0; v <= max + step / 2; v += step) out.push(v);
  return out;
}

const label = (v: number) =>
  v >= 1000
    ? `${(v / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })}k`
    : `${Number(v.toPrecision(3))}`;

export function lineChart(chart: Chart): string {
  const values = chart.series.flatMap((s) => s.values).filter((v): v is number => v !== undefined && v > 0);
  const logY = chart.logY ?? false;
  const yTicks = ticks(logY ? Math.min(...values) : 0, Math.max(...values), logY);
  const [lo, hi] = [yTicks[0]!, yTicks.at(-1)!];
  const plotW = WIDTH - PLOT.left - PLOT.right;
  const plotH = HEIGHT - PLOT.top - PLOT.bottom;
  const x = (i: number) =>
    PLOT.left + (chart.xs.length === 1 ? plotW / 2 : (i * plotW) / (chart.xs.length - 1));
  const y = (v: number) =>
    PLOT.top + plotH - (logY ? Math.log10(v / lo) / Math.log10(hi / lo) : (v - lo) / (hi - lo)) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escape(chart.title)}</text>`,
  ];
  for (const t of yTicks) {
    out.push(
      `<line x1="${PLOT.left}" x2="${PLOT.left + plotW}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#ddd"/>`,
      `<text x="${PLOT.left - 8}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${label(t)}</text>`,
    );
  }
  chart.xs.forEach((xv, i) =>
    out.push(
      `<text x="${x(i).toFixed(1)}" y="${PLOT.top + plotH + 20}" text-anchor="middle">${escape(String(xv))}</text>`,
    ),
  );
  out.push(
    `<line x1="${PLOT.left}" x2="${PLOT.left}" y1="${PLOT.top}" y2="${PLOT.top + plotH}" stroke="black"/>`,
    `<line x1="${PLOT.left}" x2="${PLOT.left + plotW}" y1="${PLOT.top + plotH}" y2="${PLOT.top + plotH}" stroke="black"/>`,
    `<text x="${PLOT.left + plotW / 2}" y="${HEIGHT - 16}" text-anchor="middle">${escape(chart.xLabel)}</text>`,
    `<text transform="translate(20 ${PLOT.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(chart.yLabel)}${logY ? ' (log scale)' : ''}</text>`,
  );
  chart.series.forEach((s, n) => {
    const color = COLORS[n % COLORS.length]!;
    const points = s.values
      .map((v, i) => (v !== undefined && v > 0 ? `${x(i).toFixed(1)},${y(v).toFixed(1)}` : undefined))
      .filter((p): p is string => p !== undefined);
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.join(' ')}"/>`);
    for (const p of points) {
      const [px, py] = p.split(',');
      out.push(`<circle cx="${px}" cy="${py}" r="3.5" fill="${color}"/>`);
    }
    const ly = PLOT.top + 10 + n * 20;
    out.push(
      `<line x1="${WIDTH - PLOT.right + 20}" x2="${WIDTH - PLOT.right + 40}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${WIDTH - PLOT.right + 46}" y="${ly + 4}">${escape(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
