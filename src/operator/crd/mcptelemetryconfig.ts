/** MCPTelemetryConfig: OpenTelemetry export and Prometheus metrics of a proxy (RunConfig `telemetry_config`). */
import * as z from 'zod';
import { OTLP_PROTOCOL_NAMES } from '../../config/runconfig.js';
import { defineKind } from './kind.js';
import { caBundleRefSchema, configStatusSchema, stringMap, withRules } from './schema-parts.js';

export const openTelemetrySchema = withRules(
  z.object({
    endpoint: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe('OTLP collector endpoint (host:port, or a URL whose scheme is dropped).'),
    protocol: z
      .enum(OTLP_PROTOCOL_NAMES)
      .default('http/json')
      .describe('OTLP protocol: http/json (collectors listen on 4318) or grpc (4317).'),
    insecure: z.boolean().default(false).describe('Send OTLP without TLS.'),
    headers: stringMap()
      .optional()
      .describe(
        'Headers sent to the collector. Stored in plaintext in the proxy RunConfig: no secrets here.',
      ),
    resourceAttributes: stringMap().optional().describe('Extra OpenTelemetry resource attributes.'),
    tracing: z
      .object({
        enabled: z.boolean().default(false),
        samplingRate: z.number().min(0).max(1).default(0.1).describe('Share of traces sampled, 0.0 to 1.0.'),
      })
      .optional(),
    metrics: z.object({ enabled: z.boolean().default(false) }).optional(),
    useLegacyAttributes: z
      .boolean()
      .default(false)
      .describe('Also emit the pre-1.0 MCP semantic attribute names.'),
    caBundleRef: caBundleRefSchema
      .optional()
      .describe('ConfigMap key with the PEM CA bundle of the collector.'),
  }),
  [
    {
      rule: '!((has(self.tracing) && self.tracing.enabled) || (has(self.metrics) && self.metrics.enabled)) || has(self.endpoint)',
      message: 'endpoint is required when tracing or metrics is enabled',
      fieldPath: '.endpoint',
      holds: (o) => !(o.tracing?.enabled || o.metrics?.enabled) || o.endpoint !== undefined,
    },
    {
      rule: '!(has(self.caBundleRef) && self.insecure)',
      message: 'caBundleRef cannot be combined with insecure: true',
      fieldPath: '.caBundleRef',
      holds: (o) => !(o.caBundleRef && o.insecure),
    },
  ],
);

export const mcpTelemetryConfigSpecSchema = z.object({
  openTelemetry: openTelemetrySchema.optional(),
  prometheus: z
    .object({ enabled: z.boolean().default(false).describe('Serve /metrics in Prometheus format.') })
    .optional(),
});
export const mcpTelemetryConfigStatusSchema = configStatusSchema;

export type MCPTelemetryConfigSpec = z.output<typeof mcpTelemetryConfigSpecSchema>;
export type MCPTelemetryConfigSpecInput = z.input<typeof mcpTelemetryConfigSpecSchema>;
export type MCPTelemetryConfigStatus = z.output<typeof mcpTelemetryConfigStatusSchema>;

export const mcpTelemetryConfigKind = defineKind({
  kind: 'MCPTelemetryConfig',
  plural: 'mcptelemetryconfigs',
  shortNames: ['mcpotel'],
  columns: [
    { name: 'Endpoint', type: 'string', jsonPath: '.spec.openTelemetry.endpoint' },
    { name: 'Tracing', type: 'boolean', jsonPath: '.spec.openTelemetry.tracing.enabled' },
    { name: 'Metrics', type: 'boolean', jsonPath: '.spec.openTelemetry.metrics.enabled' },
  ],
  specRequired: false,
  spec: mcpTelemetryConfigSpecSchema,
  status: mcpTelemetryConfigStatusSchema,
});
