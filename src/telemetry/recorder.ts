/**
 * The OpenTelemetry SDK's side of telemetry: a tracer provider (batch span processor, OTLP
 * exporter) and a meter provider (OTLP reader, Prometheus reader) fed with exchange entries.
 * It runs in the telemetry worker thread (worker.ts), so building spans, queueing and
 * serialising them for export and collecting metrics never cost the thread that forwards
 * requests. Each span gets the IDs and parent the proxy's thread chose before forwarding; the
 * durations arrive grouped by metric series (batch.ts).
 */
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  InstrumentType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricReader,
} from '@opentelemetry/sdk-metrics';
import { AlwaysOnSampler, BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { spanAttributes, spanName } from './attributes.js';
import type { ExchangeBatch, SpanEntry } from './batch.js';
import { durationHistogram, proxyMetrics, type ProxyMetrics } from './metrics.js';
import { metricExporter, traceExporter } from './otlp.js';
import type { TelemetrySettings } from './settings.js';
import { PresetIdGenerator, remoteParent, spanIds } from './trace-context.js';

export interface Recorder {
  record(batch: ExchangeBatch): void;
  /** The metrics in Prometheus text format (Prometheus on). */
  scrape(): Promise<string>;
  /** Exports what is pending and stops; resolves to a warning when the last export failed. */
  close(): Promise<string | undefined>;
}

/** The instrumentation scope of Moat's spans and metrics. */
const SCOPE = 'moat';

export async function createRecorder(
  settings: TelemetrySettings,
  metricExportIntervalMs = 60_000,
): Promise<Recorder> {
  const resource = resourceFromAttributes({
    ...settings.resourceAttributes,
    'service.name': settings.serviceName,
    ...(settings.serviceVersion ? { 'service.version': settings.serviceVersion } : {}),
  });

  let tracer: Tracer | undefined;
  let tracerProvider: TracerProvider | undefined;
  const ids = new PresetIdGenerator();
  if (settings.traces) {
    tracerProvider = new TracerProvider({
      resource,
      // The proxy's thread sampled already: only sampled spans arrive.
      sampler: new AlwaysOnSampler(),
      idGenerator: ids,
      spanProcessors: [new BatchSpanProcessor({ exporter: await traceExporter(settings.traces) })],
    });
    tracer = tracerProvider.getTracer(SCOPE);
  }

  const readers: MetricReader[] = [];
  const duration = durationHistogram(SCOPE);
  if (settings.metrics) {
    const exporter = await metricExporter(settings.metrics);
    const temporality =
      exporter.selectAggregationTemporality?.(InstrumentType.HISTOGRAM) ?? AggregationTemporality.CUMULATIVE;
    readers.push(
      new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: metricExportIntervalMs,
        metricProducers: [duration.producer(temporality)],
      }),
    );
  }
  let prometheus: PrometheusExporter | undefined;
  if (settings.prometheus) {
    prometheus = new PrometheusExporter({
      preventServerStart: true,
      metricProducers: [duration.producer(AggregationTemporality.CUMULATIVE)],
    });
    readers.push(prometheus);
  }
  const meterProvider = readers.length > 0 ? new MeterProvider({ resource, readers }) : undefined;
  const metrics: ProxyMetrics | undefined = meterProvider && proxyMetrics(meterProvider.getMeter(SCOPE));
  const serializer = new PrometheusSerializer();

  function recordSpan({ facts, span: placement }: SpanEntry): void {
    if (!tracer || facts.method === undefined) return;
    const parent = remoteParent(placement.clientTraceparent, placement.clientTracestate);
    const span = ids.withIds(spanIds(placement.traceparent), () =>
      tracer.startSpan(
        spanName(facts.method!, facts.target),
        {
          kind: SpanKind.SERVER,
          startTime: facts.started,
          // A fresh object: the environment attributes go into it rather than into a copy.
          attributes: Object.assign(
            spanAttributes(facts, settings.useLegacyAttributes),
            settings.environmentAttributes,
          ),
        },
        parent,
      ),
    );
    if (facts.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: facts.error });
    span.end(facts.ended);
  }

  return {
    record(batch) {
      for (const entry of batch.spans) recordSpan(entry);
      if (!metrics) return;
      for (const [key, attributes, seconds] of batch.durations) {
        for (const value of seconds) duration.record(value, key, () => attributes);
      }
      for (const facts of batch.counted) metrics.count(facts);
    },
    async scrape() {
      if (!prometheus) throw new Error('Prometheus metrics are off');
      const { resourceMetrics, errors } = await prometheus.collect();
      if (errors.length > 0) throw new Error(errors.map(String).join('; '));
      return serializer.serialize(resourceMetrics);
    },
    async close() {
      try {
        await Promise.all([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
        return undefined;
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    },
  };
}
