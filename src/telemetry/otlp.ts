/**
 * The OTLP exporters for the checked settings: OTLP/HTTP (JSON) by default, OTLP/gRPC when
 * `telemetry_config.protocol` is `grpc`. Only the chosen transport's modules are loaded, so
 * gRPC (and @grpc/grpc-js) costs nothing unless asked for.
 */
import { readFileSync } from 'node:fs';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { errorMessage, usageError } from '../util/errors.js';
import type { OtlpSettings } from './settings.js';

export async function traceExporter(otlp: OtlpSettings): Promise<SpanExporter> {
  if (otlp.protocol === 'grpc') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
    return new OTLPTraceExporter(await grpcConfig(otlp));
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter(httpConfig(otlp, 'traces'));
}

export async function metricExporter(otlp: OtlpSettings): Promise<PushMetricExporter> {
  if (otlp.protocol === 'grpc') {
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-grpc');
    return new OTLPMetricExporter(await grpcConfig(otlp));
  }
  const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
  return new OTLPMetricExporter(httpConfig(otlp, 'metrics'));
}

function httpConfig(otlp: OtlpSettings, signal: 'traces' | 'metrics') {
  return {
    url: `${otlp.baseUrl}/v1/${signal}`,
    headers: otlp.headers,
    ...(otlp.caCertPath ? { httpAgentOptions: { ca: readCa(otlp.caCertPath) } } : {}),
  };
}

/** gRPC: headers become call metadata; an https URL (or a CA bundle) means TLS. */
async function grpcConfig(otlp: OtlpSettings) {
  const { credentials, Metadata } = await import('@grpc/grpc-js');
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(otlp.headers)) metadata.set(key, value);
  const tls = otlp.baseUrl.startsWith('https:');
  return {
    url: otlp.baseUrl,
    metadata,
    credentials: tls
      ? credentials.createSsl(otlp.caCertPath ? readCa(otlp.caCertPath) : null)
      : credentials.createInsecure(),
  };
}

function readCa(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw usageError(`telemetry_config.caCertPath: cannot read ${path}: ${errorMessage(err)}`);
  }
}
