/**
 * OpenTelemetry for the proxy, from the checked settings (settings.ts): an exchange observer that
 * makes one span per MCP request after the answer ended (explicit start and end times) and records
 * the metrics; trace propagation for HTTP backends; Prometheus `/metrics`. The chain imports this
 * module only when telemetry is configured, so the SDK is never loaded otherwise.
 */
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  InstrumentType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import type { ExchangeObserver, ExchangeSummary } from '../mcp/exchange.js';
import { errorMessage } from '../util/errors.js';
import { metricExporter, traceExporter } from './otlp.js';
import { errorType, outcomeResponses, spanAttributes, spanName } from './attributes.js';
import { durationHistogram, proxyMetrics, type ProxyMetrics } from './metrics.js';
import { listenForMetrics, type MetricsHandler, type MetricsListener } from './prometheus.js';
import type { TelemetrySettings } from './settings.js';
import {
  chooseSpan,
  isSampled,
  parentContext,
  PresetIdGenerator,
  spanIds,
  tracedAs,
  tracePropagation,
  type TracePropagation,
} from './trace-context.js';

export type { TracePropagation } from './trace-context.js';
export type { MetricsHandler } from './prometheus.js';

export interface Telemetry {
  observer: ExchangeObserver;
  /** For the HTTP forwarder, when spans are exported. */
  propagation?: TracePropagation;
  /**
   * `/metrics` on the transport port when Prometheus is on: the metrics (the deprecated migration
   * aid), or a 404 naming the diagnostics port when metricsOnTransportPort is false.
   */
  transportMetrics?: MetricsHandler;
  /** The dedicated `/metrics` URL, once start() has run. */
  metricsUrl?: string;
  /** Opens the dedicated diagnostics listener, when Prometheus is on. */
  start(): Promise<void>;
  /** Flushes what is pending and stops exporting. */
  close(): Promise<void>;
}

/** The instrumentation scope of Moat's spans and metrics. */
const SCOPE = 'moat';

export interface TelemetryOptions {
  logger: Logger;
  /** Time between OTLP metric exports (default 60 s; tests shorten it). */
  metricExportIntervalMs?: number;
}

export async function createTelemetry(
  settings: TelemetrySettings,
  options: TelemetryOptions,
): Promise<Telemetry> {
  const { logger } = options;
  const resource = resourceFromAttributes({
    ...settings.resourceAttributes,
    'service.name': settings.serviceName,
    ...(settings.serviceVersion ? { 'service.version': settings.serviceVersion } : {}),
  });

  let tracer: Tracer | undefined;
  let tracerProvider: TracerProvider | undefined;
  let propagation: TracePropagation | undefined;
  let sampler: Sampler | undefined;
  const ids = new PresetIdGenerator();
  if (settings.traces) {
    sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) });
    tracerProvider = new TracerProvider({
      resource,
      sampler,
      idGenerator: ids,
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: await traceExporter(settings.traces),
        }),
      ],
    });
    tracer = tracerProvider.getTracer(SCOPE);
    propagation = tracePropagation(sampler);
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
        exportIntervalMillis: options.metricExportIntervalMs ?? 60_000,
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
  const metrics: ProxyMetrics | undefined =
    meterProvider && proxyMetrics(meterProvider.getMeter(SCOPE), duration);
  const metricsHandler: MetricsHandler | undefined =
    prometheus && ((req, res) => prometheus.getMetricsRequestHandler(req, res));

  function recordSpan(summary: ExchangeSummary, error: string | undefined): void {
    const { record } = summary;
    if (!tracer || !sampler || record.method === undefined) return;
    // Chosen before forwarding (record.traceparent, in the format this module wrote) or now: an
    // unsampled span returns here, before any context or attribute is built.
    if (record.traceparent !== undefined && !tracedAs(record.traceparent)) return;
    const parent = parentContext(record, summary);
    const chosen = record.traceparent ? spanIds(record.traceparent) : chooseSpan(sampler, parent, ids);
    if (!isSampled(chosen)) return;
    const span = ids.withIds(chosen, () =>
      tracer.startSpan(
        spanName(record.method!, record.target),
        {
          kind: SpanKind.SERVER,
          startTime: summary.started,
          // A fresh object: the environment attributes go into it rather than into a copy.
          attributes: Object.assign(
            spanAttributes(summary, error, settings.useLegacyAttributes),
            settings.environmentAttributes,
          ),
        },
        parent,
      ),
    );
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end(summary.ended);
  }

  let listener: MetricsListener | undefined;
  const telemetry: Telemetry = {
    observer: {
      needsResponse: outcomeResponses,
      onExchange(summary) {
        try {
          const error = errorType(summary);
          recordSpan(summary, error);
          metrics?.record(summary, error);
        } catch (err) {
          logger.error({ err: errorMessage(err) }, 'could not record telemetry for an exchange');
        }
      },
      close: async () => {
        await listener?.close();
        await Promise.all([tracerProvider?.shutdown(), meterProvider?.shutdown()]).catch((err: unknown) =>
          logger.warn({ err: errorMessage(err) }, 'telemetry export at shutdown failed'),
        );
      },
    },
    ...(propagation ? { propagation } : {}),
    ...(metricsHandler
      ? { transportMetrics: settings.prometheus?.onTransportPort ? metricsHandler : notOnThisPort }
      : {}),
    async start() {
      if (!metricsHandler || !settings.prometheus || listener) return;
      listener = await listenForMetrics(
        settings.prometheus.host,
        settings.prometheus.port,
        metricsHandler,
        logger,
      );
      telemetry.metricsUrl = listener.url;
    },
    close: () => telemetry.observer.close(),
  };
  return telemetry;
}

const notOnThisPort: MetricsHandler = (_req, res) => {
  res
    .writeHead(404, { 'content-type': 'text/plain' })
    .end('Not found: metrics are not served on this port; scrape /metrics on the diagnostics port\n');
};
