import { ValueType } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  type DataPoint,
  type Histogram,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { CARDINALITY_LIMIT, DurationHistogram } from './duration-histogram.js';

const histogram = () =>
  new DurationHistogram(
    { name: 'd', unit: 's', description: 'd', valueType: ValueType.DOUBLE },
    [0.1, 1],
    'moat',
  );

async function points(producer: MetricProducer): Promise<Array<DataPoint<Histogram>>> {
  const { resourceMetrics } = await producer.collect();
  const metric = resourceMetrics.scopeMetrics[0]?.metrics[0];
  if (!metric) return [];
  expect(metric.dataPointType).toBe(DataPointType.HISTOGRAM);
  return metric.dataPoints as Array<DataPoint<Histogram>>;
}

describe('DurationHistogram', () => {
  it('buckets values per series (upper bounds inclusive) and builds attributes once per series', async () => {
    const h = histogram();
    let built = 0;
    const attrs = (method: string) => () => {
      built++;
      return { 'mcp.method.name': method };
    };
    for (const v of [0.05, 0.1, 0.5, 2]) h.record(v, 'a', attrs('a'));
    h.record(0.2, 'b', attrs('b'));
    expect(built).toBe(2);
    const [a, b] = await points(h.producer(AggregationTemporality.CUMULATIVE));
    expect(a!.attributes).toEqual({ 'mcp.method.name': 'a' });
    expect(a!.value).toMatchObject({
      buckets: { boundaries: [0.1, 1], counts: [2, 1, 1] },
      count: 4,
      min: 0.05,
      max: 2,
    });
    expect(a!.value.sum).toBeCloseTo(2.65);
    expect(b!.value.buckets.counts).toEqual([0, 1, 0]);
  });

  it('reports cumulative totals, or only what is new since the last collection for a delta reader', async () => {
    const h = histogram();
    const cumulative = h.producer(AggregationTemporality.CUMULATIVE);
    const delta = h.producer(AggregationTemporality.DELTA);
    h.record(0.5, 'a', () => ({ k: 'a' }));
    expect((await points(delta))[0]!.value.count).toBe(1);
    expect(await points(delta)).toEqual([]);
    h.record(0.5, 'a', () => ({ k: 'a' }));
    h.record(5, 'a', () => ({ k: 'a' }));
    const [d] = await points(delta);
    expect(d!.value).toMatchObject({ count: 2, sum: 5.5, buckets: { counts: [0, 1, 1] } });
    expect(d!.value.min).toBeUndefined();
    expect((await points(cumulative))[0]!.value).toMatchObject({ count: 3, min: 0.5, max: 5 });
  });

  it('counts series beyond the cardinality limit together, marked as overflow', async () => {
    const h = histogram();
    for (let i = 0; i < CARDINALITY_LIMIT + 10; i++) h.record(0.5, `k${i}`, () => ({ k: i }));
    const all = await points(h.producer(AggregationTemporality.CUMULATIVE));
    expect(all).toHaveLength(CARDINALITY_LIMIT);
    const overflow = all.find((p) => p.attributes['otel.metric.overflow'] === true)!;
    expect(overflow.value.count).toBe(11);
  });
});
