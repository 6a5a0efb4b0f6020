/**
 * What the RunConfig's `telemetry_config` asks for, checked and with defaults applied. Pure: no
 * OpenTelemetry code is loaded here, so the chain can decide whether telemetry is on for free.
 */
import { DEFAULTS, SECRET_REF } from '../config/defaults.js';
import type { RunConfig } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';

/** Port of the dedicated `/metrics` listener when `prometheusPort` is not set (Prometheus' registry of exporter ports). */
export const DEFAULT_PROMETHEUS_PORT = 9464;

export interface OtlpSettings {
  /** OTLP over HTTP (JSON; the default) or gRPC. */
  protocol: 'http' | 'grpc';
  /** Base URL of the receiver; for HTTP `/v1/traces` and `/v1/metrics` are appended. */
  baseUrl: string;
  headers: Record<string, string>;
  caCertPath?: string;
}

export interface TelemetrySettings {
  serviceName: string;
  serviceVersion?: string;
  /** Exports spans over OTLP (an endpoint is set and tracing is enabled). */
  traces?: OtlpSettings;
  /** Exports metrics over OTLP (an endpoint is set and metrics are enabled). */
  metrics?: OtlpSettings;
  samplingRate: number;
  /** Serves Prometheus `/metrics` on a dedicated port (0: any free port). */
  prometheus?: { host: string; port: number; onTransportPort: boolean };
  /** Resource attributes (`--otel-custom-attributes`). */
  resourceAttributes: Record<string, string>;
  /** Span attributes `environment.<NAME>` from the named variables (`--otel-env-vars`). */
  environmentAttributes: Record<string, string>;
  useLegacyAttributes: boolean;
}

/** The telemetry the RunConfig asks for, or undefined when nothing would be exported or served. */
export function telemetrySettings(
  config: RunConfig,
  env: NodeJS.ProcessEnv = process.env,
): TelemetrySettings | undefined {
  const t = config.telemetry_config;
  if (!t) return undefined;
  const otlp = t.endpoint
    ? otlpSettings(t.endpoint, t.protocol ?? 'http', t.insecure === true, t.headers, t.caCertPath)
    : undefined;
  const traces = otlp && t.tracingEnabled !== false ? otlp : undefined;
  const metrics = otlp && t.metricsEnabled !== false ? otlp : undefined;
  const prometheus =
    t.enablePrometheusMetricsPath === true
      ? {
          host: config.host,
          port: prometheusPort(t.prometheusPort),
          onTransportPort: t.metricsOnTransportPort !== false,
        }
      : undefined;
  if (!traces && !metrics && !prometheus) return undefined;
  return {
    serviceName: t.serviceName ?? `moat-${config.name}`,
    ...(t.serviceVersion ? { serviceVersion: t.serviceVersion } : {}),
    ...(traces ? { traces } : {}),
    ...(metrics ? { metrics } : {}),
    samplingRate: samplingRate(t.samplingRate),
    ...(prometheus ? { prometheus } : {}),
    resourceAttributes: { ...t.customAttributes },
    environmentAttributes: environmentAttributes(config, t.environmentVariables ?? [], env),
    useLegacyAttributes: t.useLegacyAttributes !== false,
  };
}

function samplingRate(raw: string | undefined): number {
  if (raw === undefined) return DEFAULTS.otelSamplingRate;
  const rate = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw usageError(
      `telemetry_config.samplingRate: must be a number from 0.0 to 1.0, got ${JSON.stringify(raw)}`,
    );
  }
  return rate;
}

function prometheusPort(port: number | undefined): number {
  if (port === undefined) return DEFAULT_PROMETHEUS_PORT;
  if (port < 0 || port > 65535) {
    throw usageError(`telemetry_config.prometheusPort: must be a port from 0 to 65535, got ${port}`);
  }
  return port;
}

/**
 * `--otel-endpoint` as ToolHive takes it (`host:port`, the scheme from `--otel-insecure`) or as a
 * full URL (its scheme wins).
 */
function otlpSettings(
  endpoint: string,
  protocol: 'http' | 'grpc',
  insecure: boolean,
  headers: Record<string, string> | undefined,
  caCertPath: string | undefined,
): OtlpSettings {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)
    ? endpoint
    : `${insecure ? 'http' : 'https'}://${endpoint}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw usageError(
      `telemetry_config.endpoint: ${JSON.stringify(endpoint)} is not a host:port or an http(s) URL`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usageError(
      `telemetry_config.endpoint: OTLP is exported over http or https, got ${JSON.stringify(url.protocol)}`,
    );
  }
  return {
    protocol,
    baseUrl: url.href.replace(/\/+$/, ''),
    headers: { ...headers },
    ...(caCertPath ? { caCertPath } : {}),
  };
}

/**
 * Values of the named variables: the server's environment from the RunConfig first, then the
 * proxy's own. A variable a secret is injected into is never read: its value is a secret.
 */
function environmentAttributes(
  config: RunConfig,
  names: readonly string[],
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const secretTargets = new Set(
    (config.secrets ?? []).map((ref) => SECRET_REF.exec(ref)?.[2]).filter((t) => t !== undefined),
  );
  const attributes: Record<string, string> = {};
  for (const name of names) {
    if (secretTargets.has(name)) {
      throw usageError(
        `telemetry_config.environmentVariables: ${name} holds a secret (--secret ...,target=${name}); secret values are never sent as span attributes`,
      );
    }
    const value = config.env_vars?.[name] ?? env[name];
    if (value !== undefined) attributes[`environment.${name}`] = value;
  }
  return attributes;
}
