/**
 * The RunConfig: the one document that describes a workload. Flags, --from-config, a detached
 * restart, `moat export` and the operator all produce or consume it, and the proxy process needs
 * nothing else to start. Field names and JSON shapes follow ToolHive's RunConfig
 * (schema_version v0.1.0) so exported configs move between the two tools. Secrets are never
 * stored as values: only references ("NAME,target=ENV") and file paths.
 *
 * Unknown fields are rejected (a field we do not understand must not be silently dropped).
 */
import * as z from 'zod';
import { aggregateConfigSchema } from './aggregate.js';
import {
  DURATION_FORM,
  isPositiveDuration,
  OTLP_PROTOCOL_NAMES,
  PROXY_MODES,
  SCHEMA_VERSION,
  SECRET_REF,
  TRANSPORTS,
} from './defaults.js';

export { OTLP_PROTOCOL_NAMES, PROXY_MODES, TRANSPORTS };
export type { ProxyMode, Transport } from './defaults.js';

const stringMap = z.record(z.string(), z.string());

/** A Go duration string ("30s", "2h0m0s"), as ToolHive writes durations; checked when the file is read. */
const goDuration = z.string().refine(isPositiveDuration, { message: DURATION_FORM });

/**
 * "A secret or a file holding it, not both", for each [value, file] pair of a section. The issue
 * sits on the file field and names the value field in `params.alternative`, so the CLI can
 * name both flags.
 */
function secretOrFile(pairs: readonly (readonly [string, string])[]) {
  return (section: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    for (const [value, file] of pairs) {
      if (section[value] !== undefined && section[file] !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [file],
          message: `cannot be set together with ${value}: give the secret or a file holding it, not both`,
          params: { alternative: value },
        });
      }
    }
  };
}

export const permissionProfileSchema = z.strictObject({
  name: z.string().optional(),
  read: z.array(z.string()).optional(),
  write: z.array(z.string()).optional(),
  network: z
    .strictObject({
      mode: z.string().optional(),
      outbound: z
        .strictObject({
          insecure_allow_all: z.boolean().optional(),
          allow_host: z.array(z.string()).optional(),
          allow_port: z.array(z.number().int().min(1).max(65535)).optional(),
        })
        .optional(),
      inbound: z.strictObject({ allow_host: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
  privileged: z.boolean().optional(),
});
export type PermissionProfile = z.infer<typeof permissionProfileSchema>;

/** ToolHive writes this struct without JSON tags, so its keys are Go field names. */
export const oidcConfigSchema = z.strictObject({
  Issuer: z.string().optional(),
  Audience: z.string().optional(),
  JWKSURL: z.string().optional(),
  ClientID: z.string().optional(),
  /** A secret reference ("NAME,target=oidc_client_secret"), never the secret itself. */
  ClientSecret: z.string().regex(SECRET_REF, 'must be a secret reference NAME,target=TARGET').optional(),
  CACertPath: z.string().optional(),
  AuthTokenFile: z.string().optional(),
  AllowPrivateIP: z.boolean().optional(),
  InsecureAllowHTTP: z.boolean().optional(),
  IntrospectionURL: z.string().optional(),
  ResourceURL: z.string().optional(),
  Scopes: z.array(z.string()).optional(),
});
export type OidcConfig = z.infer<typeof oidcConfigSchema>;

const remoteAuthConfigFields = z.strictObject({
  client_id: z.string().optional(),
  /** Moat's own: the URL of a client ID metadata document (CIMD), used as client_id where supported. */
  client_metadata_url: z.string().optional(),
  client_secret: z.string().regex(SECRET_REF, 'must be a secret reference NAME,target=TARGET').optional(),
  client_secret_file: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  skip_browser: z.boolean().optional(),
  /** Nanoseconds, as ToolHive writes it. */
  timeout: z.number().int().nonnegative().optional(),
  callback_port: z.number().int().min(0).max(65535).optional(),
  use_pkce: z.boolean().optional(),
  resource: z.string().optional(),
  issuer: z.string().optional(),
  authorize_url: z.string().optional(),
  token_url: z.string().optional(),
  headers: z.array(z.unknown()).optional(),
  env_vars: z.array(z.unknown()).optional(),
  oauth_params: stringMap.optional(),
  scope_param_name: z.string().optional(),
  bearer_token: z.string().regex(SECRET_REF, 'must be a secret reference NAME,target=TARGET').optional(),
  bearer_token_file: z.string().optional(),
  /** Moat's own: --remote-auth was given (OAuth to the remote is on). */
  enabled: z.boolean().optional(),
  cached_refresh_token_ref: z.string().optional(),
  cached_token_expiry: z.string().optional(),
  cached_client_id: z.string().optional(),
  cached_client_secret_ref: z.string().optional(),
  cached_secret_expiry: z.string().optional(),
  cached_reg_token_ref: z.string().optional(),
  cached_cimd_client_id: z.string().optional(),
  cached_reg_client_uri: z.string().optional(),
  cached_token_auth_method: z.string().optional(),
  cached_dcr_callback_port: z.number().int().optional(),
});
export const remoteAuthConfigSchema = remoteAuthConfigFields.superRefine(
  secretOrFile([
    ['client_secret', 'client_secret_file'],
    ['bearer_token', 'bearer_token_file'],
  ]),
);
export type RemoteAuthConfig = z.infer<typeof remoteAuthConfigSchema>;

const tokenExchangeConfigFields = z.strictObject({
  token_url: z.string(),
  client_id: z.string().optional(),
  client_secret: z.string().regex(SECRET_REF, 'must be a secret reference NAME,target=TARGET').optional(),
  client_secret_file: z.string().optional(),
  audience: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  subject_token_type: z.enum(['access_token', 'id_token']).optional(),
  header_strategy: z.enum(['replace', 'custom']).optional(),
  external_token_header_name: z.string().optional(),
});
export const tokenExchangeConfigSchema = tokenExchangeConfigFields.superRefine(
  secretOrFile([['client_secret', 'client_secret_file']]),
);
export type TokenExchangeConfig = z.infer<typeof tokenExchangeConfigSchema>;

/** The RunConfig's `telemetry_config.protocol` for each OTLP protocol name (OTLP_PROTOCOL_NAMES). */
export type OtlpProtocolName = (typeof OTLP_PROTOCOL_NAMES)[number];
export function runConfigOtlpProtocol(name: OtlpProtocolName): 'http' | 'grpc' {
  return name === 'grpc' ? 'grpc' : 'http';
}

export const telemetryConfigSchema = z.strictObject({
  endpoint: z.string().optional(),
  serviceName: z.string().optional(),
  serviceVersion: z.string().optional(),
  tracingEnabled: z.boolean().optional(),
  metricsEnabled: z.boolean().optional(),
  /** A decimal string, as ToolHive writes it ("0.1"). */
  samplingRate: z.string().optional(),
  headers: stringMap.optional(),
  insecure: z.boolean().optional(),
  enablePrometheusMetricsPath: z.boolean().optional(),
  prometheusPort: z.number().int().optional(),
  metricsOnTransportPort: z.boolean().optional(),
  environmentVariables: z.array(z.string()).optional(),
  customAttributes: stringMap.optional(),
  useLegacyAttributes: z.boolean().optional(),
  caCertPath: z.string().optional(),
  /** OTLP over `http` (JSON, the default; receivers listen on 4318) or `grpc` (4317). */
  protocol: z.enum(['http', 'grpc']).optional(),
});
export type TelemetryConfig = z.infer<typeof telemetryConfigSchema>;

export const toolOverrideSchema = z.strictObject({
  name: z.string().optional(),
  description: z.string().optional(),
});
export type ToolOverride = z.infer<typeof toolOverrideSchema>;

export const webhookSchema = z.strictObject({
  name: z.string(),
  url: z.string(),
  /** Nanoseconds, as ToolHive writes it. */
  timeout: z.number().int().nonnegative().optional(),
  failure_policy: z.enum(['fail', 'ignore']).optional(),
  tls_config: z
    .strictObject({
      ca_bundle_path: z.string().optional(),
      client_cert_path: z.string().optional(),
      client_key_path: z.string().optional(),
      insecure_skip_verify: z.boolean().optional(),
    })
    .optional(),
  hmac_secret_ref: z.string().optional(),
});
export type Webhook = z.infer<typeof webhookSchema>;

export const middlewareConfigSchema = z.strictObject({
  type: z.string(),
  parameters: z.unknown(),
});

export const runtimeConfigSchema = z.strictObject({
  builder_image: z.string().optional(),
  additional_packages: z.array(z.string()).optional(),
  build_with: z.array(z.string()).optional(),
  runtime_env: stringMap.optional(),
  /** Moat's own: path of a CA certificate added to the build (--ca-cert). */
  ca_cert_path: z.string().optional(),
});
export type RuntimeConfig = z.infer<typeof runtimeConfigSchema>;

export const headerForwardSchema = z.strictObject({
  add_plaintext_headers: stringMap.optional(),
  /** Header name → secret name in the secrets manager (never the value). */
  add_headers_from_secret: stringMap.optional(),
});

/** Redis session storage: ToolHive's scaling_config.session_redis plus password and TLS. */
export const sessionRedisSchema = z.strictObject({
  address: z.string().min(1),
  db: z.number().int().min(0).optional(),
  key_prefix: z.string().optional(),
  /** File holding the password (the value itself is never stored). MOAT_SESSION_REDIS_PASSWORD also works. */
  password_file: z.string().optional(),
  tls: z
    .strictObject({
      ca_cert_file: z.string().optional(),
      insecure_skip_verify: z.boolean().optional(),
    })
    .optional(),
  /** Bound on one Redis command (Go duration); absent means derived.ts redisCommandTimeoutMs. */
  command_timeout: goDuration.optional(),
});
export type SessionRedis = z.infer<typeof sessionRedisSchema>;

/** One token bucket: a steady rate and how many may come at once (default: one minute's worth). */
export const rateLimitRuleSchema = z.strictObject({
  requests_per_minute: z.number().int().positive(),
  burst: z.number().int().positive().optional(),
});
export type RateLimitRule = z.infer<typeof rateLimitRuleSchema>;

/** Moat's own: token-bucket rate limits per principal and per principal and tool. */
export const rateLimitSchema = z.strictObject({
  /** Every message with a method, per principal (issuer + subject; the local user when anonymous). */
  per_principal: rateLimitRuleSchema.optional(),
  /** tools/call per principal and tool. */
  per_tool: rateLimitRuleSchema.optional(),
  /** Per-tool rules that replace per_tool for the named tools. */
  tools: z.record(z.string(), rateLimitRuleSchema).optional(),
  /** When the bucket store (Redis) fails: deny (default, HTTP 503) or allow. */
  on_store_failure: z.enum(['deny', 'allow']).optional(),
});
export type RateLimitConfig = z.infer<typeof rateLimitSchema>;

const runConfigFields = z.strictObject({
  schema_version: z.string().default(SCHEMA_VERSION),
  mcpserver_generation: z.number().int().optional(),
  image: z.string(),
  remote_url: z.string().optional(),
  registry_api_url: z.string().optional(),
  registry_url: z.string().optional(),
  registry_server_name: z.string().optional(),
  remote_auth_config: remoteAuthConfigSchema.optional(),
  cmd_args: z.array(z.string()).optional(),

  name: z.string().min(1),
  container_name: z.string().optional(),
  base_name: z.string().optional(),

  transport: z.enum(TRANSPORTS),
  host: z.string(),
  /** Proxy port on the host; 0 means "pick a free port when the workload starts". */
  port: z.number().int().min(0).max(65535),
  target_port: z.number().int().min(0).max(65535).optional(),
  target_host: z.string().optional(),
  allowed_origins: z.array(z.string()).optional(),
  publish: z.array(z.string()).optional(),

  permission_profile_name_or_path: z.string().optional(),
  permission_profile: permissionProfileSchema.nullable().default(null),
  env_vars: stringMap.optional(),
  /** Moat's own: one env file (--env-file), read when the container starts so values are not stored. */
  env_file: z.string().optional(),
  /** Env files directory (--env-file-dir), read when the container starts. */
  env_file_dir: z.string().optional(),
  debug: z.boolean().optional(),
  volumes: z.array(z.string()).optional(),
  container_labels: stringMap.optional(),

  oidc_config: oidcConfigSchema.optional(),
  token_exchange_config: tokenExchangeConfigSchema.optional(),
  authz_config: z.unknown().optional(),
  authz_config_path: z.string().optional(),
  /**
   * Moat's own: what an argument Cedar cannot hold as it is does to a call (`strict`, the default:
   * refused with 403; `lossy`: left out of the decision). See docs/security.md.
   */
  authz_argument_mapping: z.enum(['strict', 'lossy']).optional(),
  audit_config: z.unknown().optional(),
  audit_config_path: z.string().optional(),
  telemetry_config: telemetryConfigSchema.optional(),

  secrets: z.array(z.string().regex(SECRET_REF, 'must be NAME,target=TARGET')).optional(),

  isolate_network: z.boolean().optional(),
  allow_docker_gateway: z.boolean().optional(),
  trust_proxy_headers: z.boolean().optional(),
  strict_protocol_validation: z.boolean().optional(),
  stateless: z.boolean().optional(),
  /** Go duration string ("2h0m0s"); absent means the default (derived.ts sessionTtlMs). */
  session_ttl: goDuration.optional(),
  proxy_mode: z.enum(PROXY_MODES).optional(),
  thv_ca_bundle: z.string().optional(),
  jwks_auth_token_file: z.string().optional(),

  group: z.string().optional(),
  tools_filter: z.array(z.string()).optional(),
  tools_override: z.record(z.string(), toolOverrideSchema).optional(),
  ignore_config: z
    .strictObject({ LoadGlobal: z.boolean().optional(), PrintOverlays: z.boolean().optional() })
    .optional(),

  middleware_configs: z.array(middlewareConfigSchema).optional(),
  validating_webhooks: z.array(webhookSchema).optional(),
  mutating_webhooks: z.array(webhookSchema).optional(),
  endpoint_prefix: z.string().optional(),

  runtime_config: runtimeConfigSchema.optional(),
  header_forward: headerForwardSchema.optional(),
  scaling_config: z
    .strictObject({
      backend_replicas: z.number().int().min(0).optional(),
      session_redis: sessionRedisSchema.optional(),
    })
    .optional(),

  // Moat's own fields (ToolHive has no equivalent in its RunConfig).
  rate_limit: rateLimitSchema.optional(),
  /** A group served as one MCP endpoint (`moat group serve`); no image, no remote_url. */
  aggregate: aggregateConfigSchema.optional(),
  /**
   * Tool definition pinning: warn (log and audit a changed tool) or enforce (also hide it until
   * approved). Pins live in Moat's state dir (`file`), in the session store's Redis when one is
   * configured, or in memory (`memory`, for pods without Redis). Absent: off.
   */
  tool_pinning: z
    .strictObject({ mode: z.enum(['warn', 'enforce']), store: z.enum(['file', 'memory']).optional() })
    .optional(),
  /**
   * Tool search: the client sees `find_tool` (BM25 over the tools it may use) and `call_tool`
   * instead of the whole tool list; calls still pass every policy as the real tool. Absent: off.
   */
  tool_search: z.boolean().optional(),
  /**
   * Guardrails (secrets and personal data in tool calls and results): the config inline (the
   * operator's `spec.guardrails`) or a file (--guardrail-config); see src/guardrails/config.ts.
   */
  guardrail_config: z.unknown().optional(),
  guardrail_config_path: z.string().optional(),
  /** Maximum inbound request body in bytes; absent means DEFAULTS.maxRequestBodySize. */
  max_request_body_size: z.number().int().positive().optional(),
  /** Go duration string; absent means the default (derived.ts proxyReadTimeoutMs). */
  proxy_read_timeout: goDuration.optional(),
  /** How long a backend (HTTP or stdio) may take to answer (Go duration); default: derived.ts upstreamTimeoutMs. */
  upstream_timeout: goDuration.optional(),
  /**
   * How long a 2026-07-28 client has to retry a request with the `requestState` of an
   * InputRequiredResult (Go duration); default: derived.ts requestStateTtlMs.
   */
  request_state_ttl: goDuration.optional(),
  /** Build-time image reference of a protocol-scheme target (uvx://, npx://, go://). */
  protocol_target: z.string().optional(),
  image_verification: z.enum(['warn', 'enabled', 'disabled']).optional(),
  /** Ports moat picked at the first start (requested as 0): kept for restarts, not exported. */
  auto_ports: z.array(z.enum(['port', 'target_port'])).optional(),
});

/**
 * What an aggregate cannot have: it runs no container, builds no image and reaches no remote URL;
 * its proxy fronts the in-process aggregator (src/aggregate/), which reaches the members.
 */
const NOT_WITH_AGGREGATE = [
  'remote_url',
  'remote_auth_config',
  'cmd_args',
  'target_port',
  'target_host',
  'publish',
  'permission_profile_name_or_path',
  'env_vars',
  'env_file',
  'env_file_dir',
  'volumes',
  'container_labels',
  'secrets',
  'isolate_network',
  'allow_docker_gateway',
  'ignore_config',
  'runtime_config',
  'protocol_target',
  'image_verification',
  'token_exchange_config',
  'header_forward',
  // The aggregator keeps a session with every member per client session: never stateless.
  'stateless',
] as const;

function aggregateAlone(config: z.infer<typeof runConfigFields>, ctx: z.RefinementCtx): void {
  if (config.aggregate === undefined) return;
  const issue = (path: string, message: string): void =>
    ctx.addIssue({ code: 'custom', path: [path], message });
  for (const field of NOT_WITH_AGGREGATE) {
    if (config[field] !== undefined)
      issue(field, 'cannot be set with aggregate (it runs no container and reaches no remote URL)');
  }
  if (config.image !== '')
    issue('image', 'must be empty with aggregate (an aggregate serves a group, not an image)');
  if (config.permission_profile !== null)
    issue('permission_profile', 'must be null with aggregate (it runs no container)');
  if (config.transport !== 'streamable-http')
    issue('transport', 'must be streamable-http with aggregate (the aggregator speaks it)');
}

export const runConfigSchema = runConfigFields
  .refine((config) => !(config.remote_url && config.transport === 'stdio'), {
    // The proxy speaks the remote server's own HTTP transport (derived.ts clientTransport).
    message: 'a remote_url server needs transport sse or streamable-http',
    path: ['transport'],
  })
  .superRefine(aggregateAlone);

export type RunConfig = z.infer<typeof runConfigSchema>;

/**
 * The RunConfig as `moat export` writes it: ports moat picked itself go back to "pick one", so
 * the file runs again next to the original or on another machine.
 */
export function exportedRunConfig(config: RunConfig): RunConfig {
  const { auto_ports: auto = [], ...exported } = config;
  if (auto.includes('port')) exported.port = 0;
  if (auto.includes('target_port')) delete exported.target_port;
  return exported;
}
export type RunConfigInput = z.input<typeof runConfigSchema>;
