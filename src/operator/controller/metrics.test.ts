import { describe, expect, it } from 'vitest';
import { Counter, Gauge, Histogram, Registry, controllerMetrics } from './metrics.js';

describe('Prometheus text encoder', () => {
  it('renders counters with HELP, TYPE and escaped label values', () => {
    const registry = new Registry();
    const c = registry.register(new Counter('demo_total', 'Demo\ncounter with a \\ backslash.'));
    c.inc({ result: 'ok' });
    c.inc({ result: 'ok' }, 2);
    c.inc({ result: 'say "hi"\n' });
    expect(registry.render()).toBe(
      [
        '# HELP demo_total Demo\\ncounter with a \\\\ backslash.',
        '# TYPE demo_total counter',
        'demo_total{result="ok"} 3',
        'demo_total{result="say \\"hi\\"\\n"} 1',
        '',
      ].join('\n'),
    );
  });

  it('treats label order as irrelevant for identity', () => {
    const c = new Counter('x_total', 'x');
    c.inc({ a: '1', b: '2' });
    c.inc({ b: '2', a: '1' });
    expect(c.get({ a: '1', b: '2' })).toBe(2);
  });

  it('renders gauges, read at render time when collected', () => {
    const registry = new Registry();
    const g = registry.register(new Gauge('depth', 'Depth.'));
    let depth = 1;
    g.collect(() => depth);
    depth = 7;
    expect(registry.render()).toContain('\ndepth 7\n');
  });

  it('renders histograms with cumulative buckets, +Inf, sum and count', () => {
    const registry = new Registry();
    const h = registry.register(new Histogram('lat_seconds', 'Latency.', [0.1, 1]));
    h.observe(0.05, { c: 'a' });
    h.observe(0.5, { c: 'a' });
    h.observe(3, { c: 'a' });
    expect(registry.render().split('\n').slice(2, -1)).toEqual([
      'lat_seconds_bucket{c="a",le="0.1"} 1',
      'lat_seconds_bucket{c="a",le="1"} 2',
      'lat_seconds_bucket{c="a",le="+Inf"} 3',
      'lat_seconds_sum{c="a"} 3.55',
      'lat_seconds_count{c="a"} 3',
    ]);
  });

  it('refuses a name the format does not allow', () => {
    expect(() => new Counter('bad-name', 'x')).toThrow(/invalid metric name: bad-name/);
  });

  it('the controller set starts with build info 1', () => {
    const text = controllerMetrics('1.2.3').registry.render();
    expect(text).toMatch(/moat_operator_build_info\{version="1\.2\.3",node="v\d+[^"]*"\} 1/);
  });
});
