import { describe, expect, it } from 'vitest';
import { lineChart } from './svg-chart.js';

describe('lineChart', () => {
  const chart = lineChart({
    title: 'Throughput <tools/call>',
    xLabel: 'concurrency',
    yLabel: 'req/s',
    xs: [1, 8, 32],
    series: [
      { name: 'direct', values: [100, 400, 800] },
      { name: 'proxy', values: [50, undefined, 400] },
    ],
  });

  it('draws one polyline per series through its points, skipping gaps', () => {
    const lines = [...chart.matchAll(/<polyline [^>]*points="([^"]*)"/g)].map((m) => m[1]!.split(' '));
    expect(lines.map((points) => points.length)).toEqual([3, 2]);
    // Higher values sit higher (smaller y); the same x for the same concurrency.
    const [direct, proxy] = lines.map((points) => points.map((p) => p.split(',').map(Number)));
    expect(direct![2]![1]).toBeLessThan(direct![0]![1]!);
    expect(proxy![1]![0]).toBe(direct![2]![0]);
  });

  it('escapes text and names every series in the legend', () => {
    expect(chart).toContain('Throughput &lt;tools/call&gt;');
    expect(chart).toMatch(/<text [^>]*>direct<\/text>/);
    expect(chart).toMatch(/<text [^>]*>proxy<\/text>/);
    expect(chart.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  });

  it('spaces a log axis by powers of ten', () => {
    const log = lineChart({
      title: 't',
      xLabel: 'x',
      yLabel: 'ms',
      xs: [1, 32],
      series: [{ name: 's', values: [0.2, 30] }],
      logY: true,
    });
    const labels = [...log.matchAll(/text-anchor="end">([^<]*)</g)].map((m) => m[1]);
    expect(labels).toEqual(['0.1', '1', '10', '100']);
    expect(log).toContain('(log scale)');
  });
});
