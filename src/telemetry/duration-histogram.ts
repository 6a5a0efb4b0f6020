/**
 * The operation-duration histogram, aggregated here instead of by an SDK instrument: the SDK
 * sorts and JSON-serialises the attributes of every recorded value to find its series, the
 * largest telemetry cost per request in profiles. Here a series is found by a short string key
 * and its attributes are built once, when the series is new; each metric reader collects the
 * buckets as a MetricProducer, with the temporality its exporter asks for.
 */
import type { Attributes, HrTime } from '@opentelemetry/api';
import { hrTime } from '@opentelemetry/core';
import {
  AggregationTemporality,
  DataPointType,
  type CollectionResult,
  type DataPoint,
  type Histogram,
  type MetricDescriptor,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { emptyResource } from '@opentelemetry/resources';

/** Series kept before new ones are counted together, as the SDK does (its default limit). */
export const CARDINALITY_LIMIT = 2000;
const OVERFLOW_KEY = '\u0000overflow';
const OVERFLOW_ATTRIBUTES: Attributes = { 'otel.metric.overflow': true };

interface Series {
  attributes: Attributes;
  counts: number[];
  sum: number;
  count: number;
  min: number;
  max: number;
}

export class DurationHistogram {
  private readonly series = new Map<string, Series>();
  private readonly started = hrTime();

  constructor(
    private readonly descriptor: MetricDescriptor,
    private readonly boundaries: readonly number[],
    private readonly scope: string,
  ) {}

  /** Records one value; `attributes` is called only for a series not seen before. */
  record(value: number, key: string, attributes: () => Attributes): void {
    let series = this.series.get(key);
    if (!series) {
      const overflow = this.series.size >= CARDINALITY_LIMIT - 1;
      series = overflow ? this.series.get(OVERFLOW_KEY) : undefined;
      if (!series) {
        series = {
          attributes: overflow ? OVERFLOW_ATTRIBUTES : attributes(),
          counts: new Array<number>(this.boundaries.length + 1).fill(0),
          sum: 0,
          count: 0,
          min: Infinity,
          max: -Infinity,
        };
        this.series.set(overflow ? OVERFLOW_KEY : key, series);
      }
    }
    let bucket = 0;
    while (bucket < this.boundaries.length && value > this.boundaries[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.sum += value;
    series.count++;
    if (value < series.min) series.min = value;
    if (value > series.max) series.max = value;
  }

  /** A producer for one reader: cumulative points, or deltas since that reader's last collection. */
  producer(temporality: AggregationTemporality): MetricProducer {
    const previous = new Map<string, { counts: number[]; sum: number; count: number }>();
    let lastCollection = this.started;
    return {
      collect: () => {
        const now = hrTime();
        const points: Array<DataPoint<Histogram>> = [];
        for (const [key, s] of this.series) {
          if (temporality === AggregationTemporality.CUMULATIVE) {
            points.push(this.point(s, this.started, now, s.counts, s.sum, s.count, true));
            continue;
          }
          const before = previous.get(key);
          const count = s.count - (before?.count ?? 0);
          previous.set(key, { counts: [...s.counts], sum: s.sum, count: s.count });
          if (count === 0) continue;
          const counts = s.counts.map((c, i) => c - (before?.counts[i] ?? 0));
          points.push(this.point(s, lastCollection, now, counts, s.sum - (before?.sum ?? 0), count, false));
        }
        lastCollection = now;
        const result: CollectionResult = {
          resourceMetrics: {
            // Ignored: the reader reports the SDK's resource.
            resource: emptyResource(),
            scopeMetrics:
              points.length === 0
                ? []
                : [
                    {
                      scope: { name: this.scope },
                      metrics: [
                        {
                          descriptor: this.descriptor,
                          aggregationTemporality: temporality,
                          dataPointType: DataPointType.HISTOGRAM,
                          dataPoints: points,
                        },
                      ],
                    },
                  ],
          },
          errors: [],
        };
        return Promise.resolve(result);
      },
    };
  }

  private point(
    s: Series,
    startTime: HrTime,
    endTime: HrTime,
    counts: number[],
    sum: number,
    count: number,
    withMinMax: boolean,
  ): DataPoint<Histogram> {
    return {
      startTime,
      endTime,
      attributes: s.attributes,
      value: {
        buckets: { boundaries: [...this.boundaries], counts: [...counts] },
        sum,
        count,
        // Minimum and maximum over a delta interval are unknown from cumulative state.
        ...(withMinMax ? { min: s.min, max: s.max } : {}),
      },
    };
  }
}
