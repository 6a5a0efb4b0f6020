/**
 * Flags → RunConfig: the pure core of `moat run`. Everything the build needs from outside (file
 * contents, whether a path exists, the working directory, where warnings go) comes through a
 * BuildContext, so the same flags always give the same RunConfig.
 *
 * Environment precedence in the container (lowest first): --env-file-dir, --env-file, -e/--env,
 * then --secret (a single named file is more specific than a directory; workloads/env.ts applies
 * it). Env files are stored as paths and read when the container starts, so their values never
 * land in the RunConfig.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { checkClientMetadataUrl } from '../auth/outbound/client-metadata-url.js';
import { DEFAULTS } from '../config/defaults.js';
import { parseToolsOverride, parseWebhookFiles } from '../config/inputs.js';
import {
  runConfigOtlpProtocol,
  runConfigSchema,
  type RemoteAuthConfig,
  type RunConfig,
  type RateLimitConfig,
  type RunConfigInput,
  type TelemetryConfig,
  type TokenExchangeConfig,
} from '../config/runconfig.js';
import { baseImages, checkRequest } from '../runtime/build/recipe.js';
import { isolationDroppedReason, parsePublish, validateLabel } from '../runtime/container-spec.js';
import { parsePermissionProfile } from '../config/permission-profile.js';
import { builtinProfile, parseVolume } from '../runtime/permissions.js';
import { FLAG_SECRETS, flagSecretName, type FlagSecret } from '../secrets/refs.js';
import type { SecretToStore } from '../secrets/workload.js';
import { NS_PER_MS, formatDuration } from '../util/duration.js';
import { errorMessage, usageError } from '../util/errors.js';
import { isMetadataHost } from '../util/net.js';
import { assertValidName, sanitizeWorkloadName } from '../workloads/names.js';
import type { ParsedRun } from './run-command.js';
import { RUN_FLAGS, type RunFlagName } from './run-flags.js';
import { defaultWorkloadName, detectTarget, type Target } from './run-target.js';
import {
  ENV_KEY,
  attributeMap,
  headerMap,
  keyValueMap,
  parseHost,
  parseHttpUrl,
  parseOrigin,
  parseResourceIndicator,
  parseSecretRef,
} from './run-values.js';

export interface BuildContext {
  cwd: string;
  /** Reads a text file; throws a usage error naming `flag` when it cannot. */
  readTextFile(path: string, flag: string): string;
  pathKind(path: string): 'file' | 'dir' | 'other' | undefined;
  warn(message: string): void;
}

/** A BuildContext on the real file system. */
export function fsBuildContext(warn: (message: string) => void, cwd = process.cwd()): BuildContext {
  return {
    cwd,
    readTextFile(path, flag) {
      try {
        return readFileSync(path, 'utf8');
      } catch (err) {
        throw usageError(`--${flag}: cannot read ${path}: ${errorMessage(err)}`);
      }
    },
    pathKind(path) {
      try {
        const stat = statSync(path);
        return stat.isFile() ? 'file' : stat.isDirectory() ? 'dir' : 'other';
      } catch {
        return undefined;
      }
    },
    warn,
  };
}

export interface BuiltRun {
  config: RunConfig;
  /**
   * Secret values given as flags: the workload layer stores them (prepareWorkloadSecrets); the
   * config holds only the references storeFlagSecret returns for them.
   */
  secretsToStore: SecretToStore[];
}

/** Flags that configure a container, meaningless for a remote URL. */
const CONTAINER_ONLY: readonly RunFlagName[] = [
  'volume',
  'publish',
  'label',
  'env',
  'env-file',
  'env-file-dir',
  'secret',
  'network',
  'permission-profile',
  'isolate-network',
  'allow-docker-gateway',
  'target-port',
  'target-host',
  'proxy-mode',
  'ignore-globally',
  'print-resolved-overlays',
];
const BUILD_ONLY: readonly RunFlagName[] = ['build-with', 'ca-cert', 'runtime-add-package', 'runtime-image'];
const REMOTE_ONLY: readonly RunFlagName[] = [
  'remote-auth',
  'remote-auth-issuer',
  'remote-auth-authorize-url',
  'remote-auth-token-url',
  'remote-auth-client-id',
  'remote-auth-client-metadata-url',
  'remote-auth-client-secret',
  'remote-auth-client-secret-file',
  'remote-auth-bearer-token',
  'remote-auth-bearer-token-file',
  'remote-auth-scopes',
  'remote-auth-scope-param-name',
  'remote-auth-resource',
  'remote-auth-callback-port',
  'remote-auth-skip-browser',
  'remote-auth-timeout',
  'remote-forward-headers',
  'remote-forward-headers-secret',
  'skip-remote-check',
];
const TOKEN_EXCHANGE: readonly RunFlagName[] = [
  'token-exchange-audience',
  'token-exchange-client-id',
  'token-exchange-client-secret',
  'token-exchange-client-secret-file',
  'token-exchange-header-name',
  'token-exchange-scopes',
  'token-exchange-subject-token-type',
];
/** Flags that configure inbound OIDC (--thv-ca-bundle and --jwks-auth-token-file only refine it). */
const OIDC: readonly RunFlagName[] = [
  'oidc-issuer',
  'oidc-audience',
  'oidc-client-id',
  'oidc-client-secret',
  'oidc-introspection-url',
  'oidc-jwks-url',
  'oidc-scopes',
  'oidc-insecure-allow-http',
  'jwks-allow-private-ip',
  'resource-url',
];
/**
 * Flags that exclude each other. "A secret or a file holding it" is a rule of the RunConfig
 * schema instead (a hand-written config must obey it too); see invalidDraft.
 */
const EXCLUSIVE_PAIRS: readonly (readonly [RunFlagName, RunFlagName])[] = [
  ['remote-auth-issuer', 'remote-auth-authorize-url'],
  ['remote-auth-issuer', 'remote-auth-token-url'],
];

function describeTarget(target: Target): string {
  if (target.kind === 'remote') return `a remote URL (${target.url})`;
  if (target.kind === 'protocol') return `a ${target.scheme}:// package`;
  return `an image (${target.ref})`;
}

function used(explicit: ReadonlySet<RunFlagName>, names: readonly RunFlagName[]): RunFlagName[] {
  return names.filter((name) => explicit.has(name));
}

function checkApplicability(target: Target, explicit: ReadonlySet<RunFlagName>, serverArgs: string[]): void {
  const misplaced = (names: RunFlagName[], why: string): void => {
    if (names.length > 0) {
      throw usageError(
        `${names.map((n) => `--${n}`).join(', ')} ${why}; the target is ${describeTarget(target)}`,
      );
    }
  };
  if (target.kind === 'remote') {
    misplaced(used(explicit, CONTAINER_ONLY), 'can only be used with containers, not with remote URLs');
    if (serverArgs.length > 0) {
      throw usageError(`arguments after -- go to a container; the target is ${describeTarget(target)}`);
    }
  } else {
    misplaced(used(explicit, REMOTE_ONLY), 'can only be used with remote URL targets');
  }
  if (target.kind !== 'protocol') {
    misplaced(
      used(explicit, BUILD_ONLY),
      'can only be used with protocol-scheme targets (uvx://, npx://, go://)',
    );
  }
  for (const [a, b] of EXCLUSIVE_PAIRS) {
    if (explicit.has(a) && explicit.has(b)) throw usageError(`--${a} and --${b} cannot be used together`);
  }
  if (!explicit.has('token-exchange-url')) {
    misplaced(
      used(explicit, TOKEN_EXCHANGE),
      'can only be used with --token-exchange-url (it enables token exchange)',
    );
  }
}

/** Builds the RunConfig from parsed flags. Throws usage errors naming the flag at fault. */
export function buildRunConfig(parsed: ParsedRun, ctx: BuildContext): BuiltRun {
  const { flags, explicit, serverArgs } = parsed;
  if (parsed.target === undefined) {
    throw usageError(
      'missing target: moat run needs SERVER_OR_IMAGE_OR_PACKAGE_OR_URL (or --from-config <path>)',
    );
  }
  const target = detectTarget(parsed.target);
  if (target.kind === 'remote' && isMetadataHost(target.hostname) && !flags.allowMetadataAddress) {
    throw usageError(
      `target ${target.url}: ${target.hostname} is a link-local or cloud metadata address, never an MCP server; ` +
        'add --allow-metadata-address if it really is one',
    );
  }
  checkApplicability(target, explicit, serverArgs);
  const abs = (path: string): string => resolve(ctx.cwd, path);
  const existing = (
    flag: RunFlagName,
    path: string | undefined,
    kind: 'file' | 'dir' = 'file',
  ): string | undefined => {
    if (path === undefined) return undefined;
    const full = abs(path);
    if (ctx.pathKind(full) !== kind)
      throw usageError(`--${flag}: ${kind === 'dir' ? 'directory' : 'file'} not found: ${path}`);
    return full;
  };

  const requested = flags.name ?? defaultWorkloadName(target);
  const name = sanitizeWorkloadName(requested);
  if (name !== requested) {
    ctx.warn(
      `the name ${JSON.stringify(requested)} contained invalid characters and was changed to "${name}"`,
    );
  }
  assertValidName(flags.group, 'group name (--group)');

  const transport = flags.transport ?? DEFAULTS.transport;
  const http = transport !== 'stdio';
  if (target.kind === 'remote' && !http) {
    throw usageError('--transport stdio cannot reach a remote URL; use streamable-http or sse');
  }
  if (http && explicit.has('proxy-mode')) {
    throw usageError(`--proxy-mode only applies to --transport stdio (the transport is ${transport})`);
  }
  if (!http) {
    for (const flag of ['target-port', 'target-host'] as const) {
      if (explicit.has(flag)) throw usageError(`--${flag} only applies to sse or streamable-http transport`);
    }
  }
  if (explicit.has('proxy-mode') && flags.proxyMode === 'sse') {
    ctx.warn(
      `the 'sse' proxy mode is deprecated and will be removed in a future release; use '${DEFAULTS.proxyMode}' (the default)`,
    );
  }
  if (flags.endpointPrefix !== undefined && !flags.endpointPrefix.startsWith('/')) {
    throw usageError(`--endpoint-prefix must start with '/', got ${JSON.stringify(flags.endpointPrefix)}`);
  }

  const secretsToStore: SecretToStore[] = [];
  /** Records a command-line secret value to store and returns its reference `NAME,target=TARGET`. */
  const secretRef = (kind: FlagSecret, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    secretsToStore.push({ kind, value });
    return `${flagSecretName(kind, name)},target=${FLAG_SECRETS[kind].target}`;
  };

  const container = target.kind !== 'remote';
  const profile = container ? permissionProfile(parsed, ctx, abs) : undefined;
  const draft: RunConfigInput = {
    image: target.kind === 'image' ? target.ref : target.kind === 'remote' ? target.url : target.raw,
    ...(target.kind === 'remote' ? { remote_url: target.url } : {}),
    ...(target.kind === 'remote'
      ? { remote_auth_config: remoteAuthConfig(parsed, secretRef, existing) }
      : {}),
    ...(serverArgs.length > 0 ? { cmd_args: [...serverArgs] } : {}),
    name,
    container_name: name,
    base_name: name,
    transport,
    host: parseHost('host', flags.host),
    port: flags.proxyPort ?? 0,
    ...(container && http ? { target_port: flags.targetPort ?? 0 } : {}),
    ...(container && http ? { target_host: parseHost('target-host', flags.targetHost) } : {}),
    ...nonEmpty('allowed_origins', flags.allowedOrigins.map(parseOrigin)),
    ...nonEmpty(
      'publish',
      flags.publish.map((p) => (parsePublish(p), p)),
    ),
    ...(profile ?? { permission_profile: null }),
    ...defined('env_vars', keyValueMap('env', flags.env, 'KEY=VALUE', ENV_KEY)),
    ...defined('env_file', existing('env-file', flags.envFile)),
    ...defined('env_file_dir', existing('env-file-dir', flags.envFileDir, 'dir')),
    ...(flags.debug ? { debug: true } : {}),
    ...nonEmpty('volumes', volumes(flags.volume, ctx)),
    ...defined('container_labels', labels(flags.label)),
    ...defined('oidc_config', oidcConfig(parsed, secretRef, existing)),
    ...defined('token_exchange_config', tokenExchangeConfig(parsed, secretRef, existing)),
    ...defined('authz_config_path', existing('authz-config', flags.authzConfig)),
    ...(flags.enableAudit && flags.auditConfig === undefined ? { audit_config: {} } : {}),
    ...defined('audit_config_path', existing('audit-config', flags.auditConfig)),
    ...defined('telemetry_config', telemetryConfig(parsed, name)),
    ...nonEmpty('secrets', flags.secret.map(parseSecretRef)),
    ...(profile ? isolation(parsed, ctx, profile.permission_profile) : {}),
    ...(flags.trustProxyHeaders ? { trust_proxy_headers: true } : {}),
    ...(flags.strictProtocolValidation ? { strict_protocol_validation: true } : {}),
    ...(flags.stateless ? { stateless: true } : {}),
    ...(flags.sessionTtl > 0 ? { session_ttl: formatDuration(flags.sessionTtl) } : {}),
    proxy_mode: http ? transport : flags.proxyMode,
    ...defined('thv_ca_bundle', existing('thv-ca-bundle', flags.thvCaBundle)),
    ...defined('jwks_auth_token_file', existing('jwks-auth-token-file', flags.jwksAuthTokenFile)),
    group: flags.group,
    ...nonEmpty('tools_filter', [...new Set(flags.tools)]),
    ...(flags.toolsOverride !== undefined
      ? {
          tools_override: parseToolsOverride(
            ctx.readTextFile(abs(flags.toolsOverride), 'tools-override'),
            `--tools-override ${flags.toolsOverride}`,
          ),
        }
      : {}),
    ...(container
      ? { ignore_config: { LoadGlobal: flags.ignoreGlobally, PrintOverlays: flags.printResolvedOverlays } }
      : {}),
    ...webhooks(flags.webhookConfig, ctx, abs),
    ...defined('endpoint_prefix', flags.endpointPrefix),
    ...(target.kind === 'protocol' ? { runtime_config: runtimeConfig(parsed, target, existing) } : {}),
    ...headerForward(parsed),
    ...(flags.maxRequestBodySize > 0 ? { max_request_body_size: flags.maxRequestBodySize } : {}),
    ...defined('rate_limit', rateLimit(flags.rateLimit, flags.toolRateLimit, flags.rateLimitFailOpen)),
    ...(flags.toolPinning === 'off' ? {} : { tool_pinning: { mode: flags.toolPinning } }),
    ...(flags.proxyReadTimeout > 0 ? { proxy_read_timeout: formatDuration(flags.proxyReadTimeout) } : {}),
    ...(flags.upstreamTimeout > 0 ? { upstream_timeout: formatDuration(flags.upstreamTimeout) } : {}),
    ...(flags.requestStateTtl > 0 ? { request_state_ttl: formatDuration(flags.requestStateTtl) } : {}),
    // A local Go project is saved by absolute path, so --from-config and restarts find it anywhere.
    ...(target.kind === 'protocol'
      ? { protocol_target: target.local ? `go://${abs(target.pkg)}` : target.raw }
      : {}),
    ...(container ? { image_verification: flags.imageVerification } : {}),
    ...defined('registry_server_name', parsed.registry?.server),
  };
  const result = runConfigSchema.safeParse(draft);
  if (!result.success) throw invalidDraft(result.error);
  return { config: result.data, secretsToStore };
}

/** The flag that fills a RunConfig field (the flag table's runConfig column). */
function flagFilling(path: readonly PropertyKey[]): RunFlagName | undefined {
  const field = path.join('.');
  return RUN_FLAGS.find((row) => (row.runConfig as readonly string[]).includes(field))?.long;
}

/**
 * A schema rule the flags broke, named by flag: "a secret or a file holding it" conflicts name
 * both flags. Anything else is a bug in the mapping (the flags were checked above).
 */
function invalidDraft(error: z.ZodError): Error {
  for (const issue of error.issues) {
    const alternative =
      issue.code === 'custom' ? (issue.params?.alternative as string | undefined) : undefined;
    const file = flagFilling(issue.path);
    const value = alternative && flagFilling([...issue.path.slice(0, -1), alternative]);
    if (file && value) return usageError(`--${value} and --${file} cannot be used together`);
  }
  return new Error(`internal error: the RunConfig built from the flags is invalid: ${error.message}`);
}

function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function nonEmpty<K extends string, V>(key: K, values: V[]): { [P in K]?: V[] } {
  return defined(key, values.length > 0 ? values : undefined);
}

/** The permission profile (builtin or JSON file), with --network as its network mode. */
function permissionProfile(
  { flags, registry }: ParsedRun,
  ctx: BuildContext,
  abs: (path: string) => string,
): Pick<RunConfigInput, 'permission_profile' | 'permission_profile_name_or_path'> {
  // The registry entry's profile is the default (spec §2.1); a profile object was validated with the entry.
  const fromRegistry = flags.permissionProfile === undefined ? registry?.permissions : undefined;
  const chosen =
    flags.permissionProfile ?? (typeof fromRegistry === 'string' ? fromRegistry : DEFAULTS.permissionProfile);
  let profile = typeof fromRegistry === 'object' ? structuredClone(fromRegistry) : builtinProfile(chosen);
  if (profile === undefined) {
    const path = abs(chosen);
    const text = ctx.readTextFile(path, 'permission-profile');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw usageError(`--permission-profile ${chosen}: not valid JSON (${errorMessage(err)})`);
    }
    profile = parsePermissionProfile(json, `--permission-profile ${path}`);
  }
  if (flags.network !== undefined) profile.network = { ...profile.network, mode: flags.network };
  return {
    ...(flags.permissionProfile !== undefined
      ? { permission_profile_name_or_path: flags.permissionProfile }
      : {}),
    permission_profile: profile,
  };
}

/** `-v` mounts with absolute host paths (so a restart from another directory mounts the same). */
function volumes(values: readonly string[], ctx: BuildContext): string[] {
  return values.map((text) => {
    const mount = parseVolume(text, ctx.cwd);
    if (ctx.pathKind(mount.source) === undefined) {
      throw usageError(`--volume ${text}: host path does not exist: ${mount.source}`);
    }
    return `${mount.source}:${mount.target}${mount.readOnly ? ':ro' : ''}`;
  });
}

function labels(values: readonly string[]): Record<string, string> | undefined {
  const map = keyValueMap('label', values, 'key=value');
  for (const [key, value] of Object.entries(map ?? {})) validateLabel(key, value);
  return map;
}

/**
 * Network isolation needs bridge networking: dropped for other modes, an error if asked for.
 * Moat always enforces a profile that restricts outbound traffic, so opting out of isolation
 * with such a profile is refused rather than ignored.
 */
function isolation(
  { flags, explicit }: ParsedRun,
  ctx: BuildContext,
  profile: RunConfigInput['permission_profile'],
): Partial<RunConfigInput> {
  if (!flags.isolateNetwork && profile?.network?.outbound?.insecure_allow_all !== true) {
    throw usageError(
      `--isolate-network=false conflicts with the permission profile ${JSON.stringify(profile?.name ?? 'custom')}, ` +
        'which restricts outbound traffic (moat always enforces it); use --permission-profile network ' +
        'to allow all outbound traffic',
    );
  }
  const mode = flags.network;
  const bridge = mode === undefined || mode === '' || mode === 'bridge' || mode === 'default';
  let isolate = flags.isolateNetwork;
  if (isolate && !bridge) {
    if (explicit.has('isolate-network')) {
      throw usageError(
        `--isolate-network cannot be enforced with --network ${mode}: isolation needs bridge networking ` +
          '(use --network bridge, or --isolate-network=false)',
      );
    }
    ctx.warn(isolationDroppedReason(mode));
    isolate = false;
  }
  if (flags.allowDockerGateway && !isolate) {
    throw usageError(
      '--allow-docker-gateway only applies with network isolation (--isolate-network on a bridge network)',
    );
  }
  return { isolate_network: isolate, ...(flags.allowDockerGateway ? { allow_docker_gateway: true } : {}) };
}

type SecretRefFn = (kind: FlagSecret, value: string | undefined) => string | undefined;
type ExistingFn = (flag: RunFlagName, path: string | undefined, kind?: 'file' | 'dir') => string | undefined;

function oidcConfig(
  { flags, explicit }: ParsedRun,
  secretRef: SecretRefFn,
  existing: ExistingFn,
): RunConfigInput['oidc_config'] {
  if (used(explicit, OIDC).length === 0) return undefined;
  const issuer = flags.oidcIssuer === undefined ? undefined : parseHttpUrl('oidc-issuer', flags.oidcIssuer);
  if (issuer?.protocol === 'http:' && !flags.oidcInsecureAllowHttp) {
    throw usageError(
      '--oidc-issuer must use https:// (for local development add --oidc-insecure-allow-http)',
    );
  }
  const url = (flag: RunFlagName, value: string | undefined): string | undefined =>
    value === undefined ? undefined : (parseHttpUrl(flag, value), value);
  const config: NonNullable<RunConfigInput['oidc_config']> = {
    Issuer: flags.oidcIssuer,
    Audience: flags.oidcAudience,
    JWKSURL: url('oidc-jwks-url', flags.oidcJwksUrl),
    ClientID: flags.oidcClientId,
    ClientSecret: secretRef('oidcClientSecret', flags.oidcClientSecret),
    CACertPath: existing('thv-ca-bundle', flags.thvCaBundle),
    AuthTokenFile: existing('jwks-auth-token-file', flags.jwksAuthTokenFile),
    AllowPrivateIP: flags.jwksAllowPrivateIp || undefined,
    InsecureAllowHTTP: flags.oidcInsecureAllowHttp || undefined,
    IntrospectionURL: url('oidc-introspection-url', flags.oidcIntrospectionUrl),
    ResourceURL: url('resource-url', flags.resourceUrl),
    Scopes: flags.oidcScopes.length > 0 ? flags.oidcScopes : undefined,
  };
  return dropUndefined(config);
}

function remoteAuthConfig(
  { flags }: ParsedRun,
  secretRef: SecretRefFn,
  existing: ExistingFn,
): RemoteAuthConfig {
  const url = (flag: RunFlagName, value: string | undefined): string | undefined =>
    value === undefined ? undefined : (parseHttpUrl(flag, value), value);
  if (flags.remoteAuthTimeout <= 0) {
    throw usageError('--remote-auth-timeout: expected a duration greater than zero, such as 30s or 2m');
  }
  return dropUndefined({
    client_id: flags.remoteAuthClientId,
    client_metadata_url:
      flags.remoteAuthClientMetadataUrl === undefined
        ? undefined
        : checkClientMetadataUrl(flags.remoteAuthClientMetadataUrl, '--remote-auth-client-metadata-url'),
    client_secret: secretRef('remoteClientSecret', flags.remoteAuthClientSecret),
    client_secret_file: existing('remote-auth-client-secret-file', flags.remoteAuthClientSecretFile),
    scopes: flags.remoteAuthScopes.length > 0 ? flags.remoteAuthScopes : undefined,
    skip_browser: flags.remoteAuthSkipBrowser || undefined,
    timeout: flags.remoteAuthTimeout * NS_PER_MS,
    callback_port: flags.remoteAuthCallbackPort,
    resource:
      flags.remoteAuthResource === undefined
        ? undefined
        : parseResourceIndicator('remote-auth-resource', flags.remoteAuthResource),
    issuer: url('remote-auth-issuer', flags.remoteAuthIssuer),
    authorize_url: url('remote-auth-authorize-url', flags.remoteAuthAuthorizeUrl),
    token_url: url('remote-auth-token-url', flags.remoteAuthTokenUrl),
    scope_param_name: flags.remoteAuthScopeParamName,
    bearer_token: secretRef('bearerToken', flags.remoteAuthBearerToken),
    bearer_token_file: existing('remote-auth-bearer-token-file', flags.remoteAuthBearerTokenFile),
    enabled: flags.remoteAuth || undefined,
  });
}

function tokenExchangeConfig(
  { flags }: ParsedRun,
  secretRef: SecretRefFn,
  existing: ExistingFn,
): TokenExchangeConfig | undefined {
  if (flags.tokenExchangeUrl === undefined) return undefined;
  parseHttpUrl('token-exchange-url', flags.tokenExchangeUrl);
  return dropUndefined({
    token_url: flags.tokenExchangeUrl,
    client_id: flags.tokenExchangeClientId,
    client_secret: secretRef('tokenExchangeClientSecret', flags.tokenExchangeClientSecret),
    client_secret_file: existing('token-exchange-client-secret-file', flags.tokenExchangeClientSecretFile),
    audience: flags.tokenExchangeAudience,
    scopes: flags.tokenExchangeScopes.length > 0 ? flags.tokenExchangeScopes : undefined,
    subject_token_type: flags.tokenExchangeSubjectTokenType,
    header_strategy: flags.tokenExchangeHeaderName === undefined ? ('replace' as const) : ('custom' as const),
    external_token_header_name: flags.tokenExchangeHeaderName,
  });
}

function telemetryConfig({ flags, explicit }: ParsedRun, name: string): TelemetryConfig | undefined {
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

/** The build options, checked like the build checks them (a bad value is a usage error now, not at build time). */
function runtimeConfig(
  { flags }: ParsedRun,
  target: Target & { kind: 'protocol' },
  existing: ExistingFn,
): RunConfigInput['runtime_config'] {
  checkRequest({
    scheme: target.scheme,
    pkg: target.pkg,
    ...(flags.runtimeImage !== undefined ? { builderImage: flags.runtimeImage } : {}),
    additionalPackages: flags.runtimeAddPackage,
    buildWith: flags.buildWith,
  });
  if (flags.runtimeImage !== undefined) baseImages(target.scheme, flags.runtimeImage, {});
  return dropUndefined({
    builder_image: flags.runtimeImage,
    additional_packages: flags.runtimeAddPackage.length > 0 ? flags.runtimeAddPackage : undefined,
    build_with: flags.buildWith.length > 0 ? flags.buildWith : undefined,
    ca_cert_path: existing('ca-cert', flags.caCert),
  });
}

function headerForward({ flags }: ParsedRun): Partial<RunConfigInput> {
  const plain = headerMap('remote-forward-headers', flags.remoteForwardHeaders, 'Name=Value');
  const fromSecret = headerMap(
    'remote-forward-headers-secret',
    flags.remoteForwardHeadersSecret,
    'Name=secret-name',
  );
  if (!plain && !fromSecret) return {};
  return {
    header_forward: dropUndefined({ add_plaintext_headers: plain, add_headers_from_secret: fromSecret }),
  };
}

function webhooks(
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

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** --rate-limit, --tool-rate-limit and --rate-limit-fail-open as the RunConfig's rate_limit. */
function rateLimit(perPrincipal: number, perTool: number, failOpen: boolean): RateLimitConfig | undefined {
  if (perPrincipal <= 0 && perTool <= 0) return undefined;
  return {
    ...(perPrincipal > 0 ? { per_principal: { requests_per_minute: perPrincipal } } : {}),
    ...(perTool > 0 ? { per_tool: { requests_per_minute: perTool } } : {}),
    ...(failOpen ? { on_store_failure: 'allow' as const } : {}),
  };
}
