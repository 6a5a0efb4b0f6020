/**
 * Flags → RunConfig: the pure core of `moat run`. Everything the build needs from outside (file
 * contents, whether a path exists, the working directory, where warnings go) comes through a
 * BuildContext (run-build-context.ts), so the same flags always give the same RunConfig. This
 * file checks the target and the transport and assembles the RunConfig; which flags apply to
 * which target is run-flag-applicability.ts, and the sections are built by run-build-container.ts,
 * run-build-auth.ts and run-build-proxy.ts.
 *
 * Environment precedence in the container (lowest first): --env-file-dir, --env-file, -e/--env,
 * then --secret (a single named file is more specific than a directory; workloads/env.ts applies
 * it). Env files are stored as paths and read when the container starts, so their values never
 * land in the RunConfig.
 */
import { resolve } from 'node:path';
import type * as z from 'zod';
import { DEFAULTS } from '../config/defaults.js';
import { parseToolsOverride } from '../config/inputs.js';
import { runConfigSchema, type RunConfig, type RunConfigInput } from '../config/runconfig.js';
import { parsePublish } from '../runtime/container-spec.js';
import { FLAG_SECRETS, flagSecretName } from '../secrets/refs.js';
import type { SecretToStore } from '../secrets/workload.js';
import { formatDuration } from '../util/duration.js';
import { usageError } from '../util/errors.js';
import { isMetadataHost } from '../util/net.js';
import { assertValidName, sanitizeWorkloadName } from '../workloads/names.js';
import { defined, nonEmpty } from './optional-fields.js';
import { headerForward, oidcConfig, remoteAuthConfig, tokenExchangeConfig } from './run-build-auth.js';
import { isolation, labels, permissionProfile, runtimeConfig, volumes } from './run-build-container.js';
import type { BuildContext, ExistingFn, SecretRefFn } from './run-build-context.js';
import { rateLimit, telemetryConfig, webhooks } from './run-build-proxy.js';
import type { ParsedRun } from './run-command.js';
import { checkApplicability } from './run-flag-applicability.js';
import type { RunFlagName } from './run-flag-values.js';
import { RUN_FLAGS } from './run-flags.js';
import { defaultWorkloadName, detectTarget, type Target } from './run-target.js';
import { ENV_KEY, keyValueMap, parseHost, parseOrigin, parseSecretRef } from './run-values.js';

export interface BuiltRun {
  config: RunConfig;
  /**
   * Secret values given as flags: the workload layer stores them (prepareWorkloadSecrets); the
   * config holds only the references storeFlagSecret returns for them.
   */
  secretsToStore: SecretToStore[];
}

/** Builds the RunConfig from parsed flags. Throws usage errors naming the flag at fault. */
export function buildRunConfig(parsed: ParsedRun, ctx: BuildContext): BuiltRun {
  const { flags, explicit, serverArgs } = parsed;
  const target = targetOf(parsed);
  if (target.kind === 'remote' && isMetadataHost(target.hostname) && !flags.allowMetadataAddress) {
    throw usageError(
      `target ${target.url}: ${target.hostname} is a link-local or cloud metadata address, never an MCP server; ` +
        'add --allow-metadata-address if it really is one',
    );
  }
  checkApplicability(target, explicit, serverArgs);
  const abs = (path: string): string => resolve(ctx.cwd, path);
  const existing: ExistingFn = (flag, path, kind = 'file') => {
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

  // An aggregate's proxy speaks streamable HTTP to its aggregator (--transport is refused above).
  const transport = target.kind === 'aggregate' ? 'streamable-http' : (flags.transport ?? DEFAULTS.transport);
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
  const secretRef: SecretRefFn = (kind, value) => {
    if (value === undefined) return undefined;
    secretsToStore.push({ kind, value });
    return `${flagSecretName(kind, name)},target=${FLAG_SECRETS[kind].target}`;
  };

  const container = target.kind === 'image' || target.kind === 'protocol';
  const profile = container ? permissionProfile(parsed, ctx, abs) : undefined;
  const draft: RunConfigInput = {
    image: imageOf(target),
    ...defined('aggregate', parsed.aggregate),
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
    ...defined('guardrail_config_path', existing('guardrail-config', flags.guardrailConfig)),
    ...(flags.authzArgumentMapping === 'lossy' ? { authz_argument_mapping: 'lossy' as const } : {}),
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
    ...(flags.toolSearch ? { tool_search: true } : {}),
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

/** What the RunConfig is built for: the target on the command line, or the group `moat group serve` serves. */
function targetOf(parsed: ParsedRun): Target {
  if (parsed.aggregate) return { kind: 'aggregate', group: parsed.aggregate.group };
  if (parsed.target === undefined) {
    throw usageError(
      'missing target: moat run needs SERVER_OR_IMAGE_OR_PACKAGE_OR_URL (or --from-config <path>)',
    );
  }
  return detectTarget(parsed.target);
}

/** The RunConfig's `image`: the image, the URL of a remote, the protocol target, nothing for an aggregate. */
function imageOf(target: Target): string {
  switch (target.kind) {
    case 'image':
      return target.ref;
    case 'remote':
      return target.url;
    case 'protocol':
      return target.raw;
    case 'aggregate':
      return '';
  }
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
