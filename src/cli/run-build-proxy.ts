/**
 * The proxy features of a RunConfig built from flags: telemetry, webhooks and rate limits.
 */
import { parseWebhookFiles } from '../config/inputs.js';
import {
  runConfigOtlpProtocol,
  type RateLimitConfig,
  type RunConfigInput,
  type TelemetryConfig,
} from '../config/runconfig.js';
import { dropUndefined } from './optional-fields.js';
import type { BuildContext } from './run-build-context.js';
import type { ParsedRun } from './run-command.js';
import { attributeMap, keyValueMap } from './run-values.js';

export function telemetryConfig({ flags, explicit }: ParsedRun, name: string): TelemetryConfig | undefined {
  if (![...explicit].some((flag) => flag.startsWith('otel-'))) return undefined;
  return dropUndefined({
    endpoint: flags.otelEndpoint,
    protocol: runConfigOtlpProtocol(flags.otelProtocol),
    serviceName: flags.otelServiceName ?? `moat-${name}`,
    tracingEnabled: flags.otelTracingEnabled,
    metricsEnabled: flags.otelMetricsEnabled,
    samplingRate: String(flags.otelSamplingRate),
    headers: keyValueMap('otel-headers', flags.otelHeaders, 'key=value'),
    insecure: flags.otelInsecure,
    enablePrometheusMetricsPath: flags.otelEnablePrometheusMetricsPath,
    metricsOnTransportPort: flags.otelMetricsOnTransportPort,
    environmentVariables: flags.otelEnvVars.length > 0 ? flags.otelEnvVars : undefined,
    customAttributes:
      flags.otelCustomAttributes === undefined
        ? undefined
        : attributeMap('otel-custom-attributes', flags.otelCustomAttributes),
    useLegacyAttributes: flags.otelUseLegacyAttributes,
  });
}

export function webhooks(
  paths: string[],
  ctx: BuildContext,
  abs: (path: string) => string,
): Partial<RunConfigInput> {
  if (paths.length === 0) return {};
  const set = parseWebhookFiles(
    paths.map((path) => ({
      path: `--webhook-config ${path}`,
      text: ctx.readTextFile(abs(path), 'webhook-config'),
    })),
  );
  return {
    ...(set.validating.length > 0 ? { validating_webhooks: set.validating } : {}),
    ...(set.mutating.length > 0 ? { mutating_webhooks: set.mutating } : {}),
  };
}

/** --rate-limit, --tool-rate-limit and --rate-limit-fail-open as the RunConfig's rate_limit. */
export function rateLimit(
  perPrincipal: number,
  perTool: number,
  failOpen: boolean,
): RateLimitConfig | undefined {
  if (perPrincipal <= 0 && perTool <= 0) return undefined;
  return {
    ...(perPrincipal > 0 ? { per_principal: { requests_per_minute: perPrincipal } } : {}),
    ...(perTool > 0 ? { per_tool: { requests_per_minute: perTool } } : {}),
    ...(failOpen ? { on_store_failure: 'allow' as const } : {}),
  };
}
