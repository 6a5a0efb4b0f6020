/**
 * OpenTelemetry for the proxy, from the checked settings (settings.ts): an exchange observer that
 * reduces each exchange to plain facts and hands them to the telemetry worker thread
 * (worker-link.ts), where the SDK makes one span per sampled MCP request (explicit start and end
 * times) and records the metrics; trace propagation for HTTP backends; Prometheus `/metrics`.
 * This thread only samples and chooses span IDs (before forwarding, as propagation needs) and
 * queues a small record per exchange. The chain imports this module only when telemetry is
 * configured, so the SDK is never loaded otherwise.
 */
import { ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import type { ExchangeObserver, ExchangeSummary } from '../mcp/exchange.js';
import { errorMessage } from '../util/errors.js';
import { exchangeFacts, outcomeResponses } from './attributes.js';
import { listenForMetrics, type MetricsHandler, type MetricsListener } from './prometheus.js';
import type { SpanPlacement } from './batch.js';
import type { TelemetrySettings } from './settings.js';
import {
  chooseSpan,
  clientContext,
  formatTraceparent,
  isSampled,
  parentContext,
  tracedAs,
  tracePropagation,
  FastIdGenerator,
  type TracePropagation,
} from './trace-context.js';
import { startWorker } from './worker-link.js';

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
  const worker = await startWorker(
    {
      settings,
      ...(options.metricExportIntervalMs !== undefined
        ? { metricExportIntervalMs: options.metricExportIntervalMs }
        : {}),
    },
    (reason) => logger.error(reason),
  );

  const ids = new FastIdGenerator();
  const sampler: Sampler | undefined = settings.traces
    ? new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) })
    : undefined;
  const propagation = sampler && tracePropagation(sampler, ids);
  const metricsOn = settings.metrics !== undefined || settings.prometheus !== undefined;

  /** Where the exchange's span goes, when it is sampled; nothing is built for the others. */
  function placeSpan(summary: ExchangeSummary): SpanPlacement | undefined {
    const { record } = summary;
    if (!sampler || record.method === undefined) return undefined;
    // Chosen before forwarding (record.traceparent, in the format this module wrote) or now.
    let traceparent = record.traceparent;
    if (traceparent === undefined) {
      const chosen = chooseSpan(sampler, parentContext(record, summary), ids);
      if (!isSampled(chosen)) return undefined;
      traceparent = formatTraceparent(chosen);
    } else if (!tracedAs(traceparent)) return undefined;
    const client = clientContext(record, summary);
    return {
      traceparent,
      ...(client.traceparent !== undefined ? { clientTraceparent: client.traceparent } : {}),
      ...(client.tracestate !== undefined ? { clientTracestate: client.tracestate } : {}),
    };
  }

  const metricsHandler: MetricsHandler | undefined =
    settings.prometheus &&
    ((_req, res) => {
      worker.scrape().then(
        (text) => res.writeHead(200, { 'content-type': 'text/plain' }).end(text),
        (err: unknown) => {
          logger.warn({ err: errorMessage(err) }, 'could not collect metrics for /metrics');
          res.writeHead(503, { 'content-type': 'text/plain' }).end('# metrics are unavailable\n');
        },
      );
    });

  let listener: MetricsListener | undefined;
  const telemetry: Telemetry = {
    observer: {
      needsResponse: outcomeResponses,
      onExchange(summary) {
        try {
          const span = placeSpan(summary);
          if (span || metricsOn) worker.record(exchangeFacts(summary), span);
        } catch (err) {
          logger.error({ err: errorMessage(err) }, 'could not record telemetry for an exchange');
        }
      },
      close: async () => {
        await listener?.close();
        const warning = await worker.close();
        if (warning) logger.warn({ err: warning }, 'telemetry export at shutdown failed');
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
