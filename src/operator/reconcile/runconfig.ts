/**
 * The proxy's RunConfig (src/config/runconfig.ts), built from the MCPRemoteProxy and the objects
 * it references: everything `moat proxy --config` needs, and no secret value (secrets are named,
 * see secrets.ts; CA bundles are file paths, see mounts.ts).
 */
import {
  runConfigOtlpProtocol,
  runConfigSchema,
  type RunConfig,
  type RunConfigInput,
} from '../../config/runconfig.js';
import { describeIssues } from '../../config/issues.js';
import { usageError } from '../../util/errors.js';
import type { MCPOIDCConfig, MCPTelemetryConfig, MCPToolConfig, OidcConfigRef } from '../crd/index.js';
import { parseGuardrailConfig } from '../../guardrails/config.js';
import { resolveAuthz } from './authz.js';
import type { ProxyInputs } from './inputs.js';
import { CA_FILE, OIDC_CA_DIR, OTEL_CA_DIR, REDIS_CA_PATH, SERVICE_ACCOUNT_DIR } from './mounts.js';
import { proxyServiceUrl } from './names.js';
import { SECRET_NAMES, secretRef } from './secrets.js';

/** The proxy's argument mapping: from the MCPAuthzConfig it references, or its own authzConfig. */
function argumentMapping(inputs: ProxyInputs): 'strict' | 'lossy' | undefined {
  const { spec } = inputs.proxy;
  return spec.authzConfigRef ? inputs.authzConfig?.spec.argumentMapping : spec.authzConfig?.argumentMapping;
}

/**
 * The RunConfig, validated with `runConfigSchema`. Assumes validation passed (every reference
 * present); throws a usage error naming the field if the result still does not validate.
 */
export function buildRunConfig(inputs: ProxyInputs): RunConfig {
  const { proxy } = inputs;
  const { spec } = proxy;
  const name = proxy.metadata.name ?? '';
  const authz = resolveAuthz(inputs);
  const draft: RunConfigInput = {
    schema_version: 'v0.1.0',
    name,
    image: '',
    remote_url: spec.remoteUrl,
    transport: spec.transport,
    proxy_mode: spec.transport,
    host: '0.0.0.0',
    port: spec.proxyPort,
    ...(spec.groupRef ? { group: spec.groupRef.name } : {}),
    ...(spec.trustProxyHeaders ? { trust_proxy_headers: true } : {}),
    ...(spec.endpointPrefix ? { endpoint_prefix: spec.endpointPrefix } : {}),
    ...(spec.upstreamTimeout ? { upstream_timeout: spec.upstreamTimeout } : {}),
    ...oidcSection(
      inputs.oidcConfig,
      spec.oidcConfigRef,
      proxyServiceUrl(name, proxy.metadata.namespace ?? '', spec.proxyPort),
    ),
    ...(authz?.ok ? { authz_config: authz.config } : {}),
    ...(authz?.ok && argumentMapping(inputs) === 'lossy' ? { authz_argument_mapping: 'lossy' as const } : {}),
    ...(spec.audit?.enabled ? { audit_config: {} } : {}),
    ...toolSection(inputs.toolConfig),
    ...telemetrySection(inputs.telemetryConfig, spec.telemetryConfigRef?.serviceName ?? `moat-${name}`),
    ...outboundSection(inputs),
    ...sessionSection(inputs),
    ...rateLimitSection(inputs),
    ...pinningSection(inputs),
    ...guardrailSection(inputs),
  };
  const result = runConfigSchema.safeParse(draft);
  if (!result.success) {
    throw usageError(`the proxy's RunConfig is invalid: ${describeIssues(result.error)}`);
  }
  return result.data;
}

function oidcSection(
  config: MCPOIDCConfig | undefined,
  ref: OidcConfigRef | undefined,
  serviceUrl: string,
): Partial<RunConfigInput> {
  if (!config || !ref) return {};
  const perProxy = {
    Audience: ref.audience,
    // Default: the Service that really serves this proxy (ToolHive QUIRK: it used the CR name).
    ResourceURL: ref.resourceUrl ?? serviceUrl,
    ...(ref.scopes && ref.scopes.length > 0 ? { Scopes: ref.scopes } : {}),
  };
  const { inline, kubernetesServiceAccount: sa } = config.spec;
  if (config.spec.type === 'inline' && inline) {
    return {
      oidc_config: {
        Issuer: inline.issuer,
        ...(inline.jwksUrl ? { JWKSURL: inline.jwksUrl } : {}),
        ...(inline.introspectionUrl ? { IntrospectionURL: inline.introspectionUrl } : {}),
        ...(inline.clientId ? { ClientID: inline.clientId } : {}),
        ...(inline.clientSecretRef
          ? { ClientSecret: secretRef(SECRET_NAMES.oidcClientSecret, 'oidc_client_secret') }
          : {}),
        ...(inline.caBundleRef ? { CACertPath: `${OIDC_CA_DIR}/${CA_FILE}` } : {}),
        ...(inline.jwksAllowPrivateIP ? { AllowPrivateIP: true } : {}),
        ...(inline.insecureAllowHTTP ? { InsecureAllowHTTP: true } : {}),
        ...perProxy,
      },
    };
  }
  const issuer = sa?.issuer ?? 'https://kubernetes.default.svc';
  const clusterAuth = sa?.useClusterAuth ?? true;
  return {
    oidc_config: {
      Issuer: issuer,
      ...(sa?.jwksUrl ? { JWKSURL: sa.jwksUrl } : {}),
      ...(clusterAuth
        ? {
            CACertPath: `${SERVICE_ACCOUNT_DIR}/ca.crt`,
            AuthTokenFile: `${SERVICE_ACCOUNT_DIR}/token`,
            // The API server's issuer is an in-cluster (private) address.
            AllowPrivateIP: true,
          }
        : {}),
      ...perProxy,
    },
  };
}

function toolSection(config: MCPToolConfig | undefined): Partial<RunConfigInput> {
  if (!config) return {};
  const { toolsFilter, toolsOverride } = config.spec;
  return {
    ...(toolsFilter && toolsFilter.length > 0 ? { tools_filter: toolsFilter } : {}),
    ...(toolsOverride && Object.keys(toolsOverride).length > 0 ? { tools_override: toolsOverride } : {}),
  };
}

function telemetrySection(
  config: MCPTelemetryConfig | undefined,
  serviceName: string,
): Partial<RunConfigInput> {
  if (!config) return {};
  const { openTelemetry: otel, prometheus } = config.spec;
  if (!otel && !prometheus) return {};
  return {
    telemetry_config: {
      serviceName,
      ...(otel?.endpoint ? { endpoint: otel.endpoint.replace(/^https?:\/\//, '') } : {}),
      ...(otel
        ? {
            protocol: runConfigOtlpProtocol(otel.protocol),
            insecure: otel.insecure,
            useLegacyAttributes: otel.useLegacyAttributes,
          }
        : {}),
      tracingEnabled: otel?.tracing?.enabled ?? false,
      metricsEnabled: otel?.metrics?.enabled ?? false,
      ...(otel?.tracing ? { samplingRate: String(otel.tracing.samplingRate) } : {}),
      ...(otel?.headers ? { headers: otel.headers } : {}),
      ...(otel?.resourceAttributes ? { customAttributes: otel.resourceAttributes } : {}),
      ...(otel?.caBundleRef ? { caCertPath: `${OTEL_CA_DIR}/${CA_FILE}` } : {}),
      enablePrometheusMetricsPath: prometheus?.enabled ?? false,
    },
  };
}

/** Authentication to the remote server and the forwarded headers. */
function outboundSection(inputs: ProxyInputs): Partial<RunConfigInput> {
  const forward = inputs.proxy.spec.headerForward;
  const fromSecret: Record<string, string> = {};
  (forward?.addHeadersFromSecret ?? []).forEach((header, index) => {
    fromSecret[header.headerName] = SECRET_NAMES.forwardedHeader(index);
  });
  const external = inputs.externalAuthConfig?.spec;
  if (external?.type === 'headerInjection' && external.headerInjection) {
    fromSecret[external.headerInjection.headerName] = SECRET_NAMES.externalAuthHeader;
  }
  const plain = forward?.addPlaintextHeaders ?? {};
  const section: Partial<RunConfigInput> = {};
  if (Object.keys(plain).length > 0 || Object.keys(fromSecret).length > 0) {
    section.header_forward = {
      ...(Object.keys(plain).length > 0 ? { add_plaintext_headers: plain } : {}),
      ...(Object.keys(fromSecret).length > 0 ? { add_headers_from_secret: fromSecret } : {}),
    };
  }
  if (external?.type === 'bearerToken') {
    section.remote_auth_config = { bearer_token: secretRef(SECRET_NAMES.bearerToken, 'bearer_token') };
  }
  const exchange = external?.type === 'tokenExchange' ? external.tokenExchange : undefined;
  if (exchange) {
    section.token_exchange_config = {
      token_url: exchange.tokenUrl,
      ...(exchange.clientId ? { client_id: exchange.clientId } : {}),
      ...(exchange.clientSecretRef
        ? { client_secret: secretRef(SECRET_NAMES.tokenExchangeClientSecret, 'token_exchange_client_secret') }
        : {}),
      ...(exchange.audience ? { audience: exchange.audience } : {}),
      ...(exchange.scopes && exchange.scopes.length > 0 ? { scopes: exchange.scopes } : {}),
      subject_token_type: exchange.subjectTokenType,
      header_strategy: exchange.externalTokenHeaderName ? 'custom' : 'replace',
      ...(exchange.externalTokenHeaderName
        ? { external_token_header_name: exchange.externalTokenHeaderName }
        : {}),
    };
  }
  return section;
}

type RuleSpec = { requestsPerMinute: number; burst?: number | undefined };
const rule = (r: RuleSpec) => ({
  requests_per_minute: r.requestsPerMinute,
  ...(r.burst !== undefined ? { burst: r.burst } : {}),
});

/** Pods have no state dir: pins go to Redis when sessions do (the proxy picks it), else memory. */
function pinningSection(inputs: ProxyInputs): Partial<RunConfigInput> {
  const mode = inputs.proxy.spec.toolPinning;
  if (mode === undefined) return {};
  return { tool_pinning: { mode, store: 'memory' } };
}

/** The guardrail config in the file format (snake_case), checked as the proxy will check it. */
function guardrailSection(inputs: ProxyInputs): Partial<RunConfigInput> {
  const spec = inputs.proxy.spec.guardrails;
  if (!spec) return {};
  const directions = (d: { toServer?: string; toClient?: string }) => ({
    ...(d.toServer ? { to_server: d.toServer } : {}),
    ...(d.toClient ? { to_client: d.toClient } : {}),
  });
  const config = {
    ...directions(spec),
    ...(spec.detectors
      ? {
          detectors: Object.fromEntries(Object.entries(spec.detectors).map(([id, d]) => [id, directions(d)])),
        }
      : {}),
  };
  parseGuardrailConfig(config, 'spec.guardrails');
  return { guardrail_config: config };
}

function rateLimitSection(inputs: ProxyInputs): Partial<RunConfigInput> {
  const limit = inputs.proxy.spec.rateLimit;
  if (!limit || (!limit.perPrincipal && !limit.perTool && !limit.tools)) return {};
  return {
    rate_limit: {
      ...(limit.perPrincipal ? { per_principal: rule(limit.perPrincipal) } : {}),
      ...(limit.perTool ? { per_tool: rule(limit.perTool) } : {}),
      ...(limit.tools
        ? { tools: Object.fromEntries(Object.entries(limit.tools).map(([name, r]) => [name, rule(r)])) }
        : {}),
      on_store_failure: limit.onStoreFailure,
    },
  };
}

function sessionSection(inputs: ProxyInputs): Partial<RunConfigInput> {
  const storage = inputs.proxy.spec.sessionStorage;
  if (storage?.provider !== 'redis' || !storage.address) return {};
  const tls = storage.tls;
  return {
    scaling_config: {
      session_redis: {
        address: storage.address,
        db: storage.db,
        ...(storage.keyPrefix !== undefined ? { key_prefix: storage.keyPrefix } : {}),
        ...(storage.commandTimeout ? { command_timeout: storage.commandTimeout } : {}),
        ...(tls
          ? {
              tls: {
                ...(tls.caCertSecretRef ? { ca_cert_file: REDIS_CA_PATH } : {}),
                ...(tls.insecureSkipVerify ? { insecure_skip_verify: true } : {}),
              },
            }
          : {}),
      },
    },
  };
}
