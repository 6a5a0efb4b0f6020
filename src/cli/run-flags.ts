/**
 * The flags of `moat run` as data: one row per flag of spec §2.1, with its type, default, help
 * text, help section and the RunConfig field it fills. The command (run-command.ts), the
 * RunConfig builder (run-build.ts) and docs/cli.md are all driven by this table. Defaults come
 * from DEFAULTS (config/defaults.ts), never written here, so the help and the docs show what the
 * code uses.
 */
import { DEFAULTS, OTLP_PROTOCOL_NAMES, PROXY_MODES } from '../config/defaults.js';
import { formatDurationShort } from '../util/duration.js';

export type FlagType = 'string' | 'stringArray' | 'strings' | 'int' | 'float' | 'duration' | 'bool';

/** Help sections, in the order and with the titles of spec §2.1. */
export const SECTIONS = {
  identity: 'Workload identity, process and transport',
  isolation: 'Isolation and permissions',
  build: 'Build-time options (protocol schemes)',
  proxy: 'HTTP proxy behavior',
  tools: 'Tools',
  policy: 'Audit, authorization and webhook files',
  oidc: 'Incoming-client OIDC validation',
  remoteAuth: 'Authentication to a remote MCP server',
  tokenExchange: 'Token exchange',
  telemetry: 'Telemetry',
} as const;
export type SectionId = keyof typeof SECTIONS;

export interface RunFlagSpec {
  /** Long name without the dashes. */
  readonly long: string;
  readonly short?: string;
  readonly type: FlagType;
  /** Placeholder shown in help for flags that take a value. */
  readonly value?: string;
  /** Parsed default (milliseconds for durations); absent means "not set". */
  readonly default?: boolean | number | string;
  /** How help shows the default when it is not the literal value. */
  readonly defaultText?: string;
  readonly choices?: readonly string[];
  /** A stringArray whose values are also split on commas (the spec's help says "comma-separated"). */
  readonly commaSeparated?: boolean;
  /** Inclusive range for int/float flags. */
  readonly min?: number;
  readonly max?: number;
  readonly help: string;
  readonly section: SectionId;
  /**
   * RunConfig field(s) the flag fills or decides (dotted paths); empty when it fills none. The
   * builder (run-build.ts) is the one place that maps flags to the RunConfig; this column is its
   * index the other way round (field → flag), for errors that name a flag and for docs/cli.md.
   * run-build.test.ts checks that each flag changes exactly these fields.
   */
  readonly runConfig: readonly string[];
}

const PORT = { min: 1, max: 65535 } as const;

/** 8388608 → "8 MiB" (help text). */
function mebibytes(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB`;
}

export const RUN_FLAGS = [
  // Workload identity, process and transport
  {
    long: 'name',
    type: 'string',
    value: '<name>',
    defaultText: 'generated from the target',
    help: 'Name of the MCP server',
    section: 'identity',
    runConfig: ['name', 'container_name', 'base_name'],
  },
  {
    long: 'group',
    type: 'string',
    value: '<group>',
    default: DEFAULTS.group,
    help: 'Group the workload belongs to',
    section: 'identity',
    runConfig: ['group'],
  },
  {
    long: 'foreground',
    short: 'f',
    type: 'bool',
    default: false,
    help: 'Block until the container exits',
    section: 'identity',
    runConfig: [],
  },
  {
    // Moat's own (not in the spec): moat run <URL> checks the remote answers before starting.
    long: 'skip-remote-check',
    type: 'bool',
    default: false,
    help: 'Start a remote URL workload even if the server does not answer now (moat run waits up to 10s for its first answer otherwise)',
    section: 'identity',
    runConfig: [],
  },
  {
    // Moat's own: a cloud metadata address is never an MCP server unless the user says so.
    long: 'allow-metadata-address',
    type: 'bool',
    default: false,
    help: 'Allow a remote URL at a link-local or cloud metadata address (169.254.169.254, fd00:ec2::254, metadata.google.internal...)',
    section: 'identity',
    runConfig: [],
  },
  {
    long: 'from-config',
    type: 'string',
    value: '<path>',
    help: 'Load configuration from an exported file (replaces the target and the configuration flags; --name, --proxy-port, --host and --group may override it)',
    section: 'identity',
    runConfig: [],
  },
  {
    long: 'transport',
    type: 'string',
    value: '<transport>',
    // The spec's order; run-command.test.ts checks it is the schema's TRANSPORTS.
    choices: ['sse', 'streamable-http', 'stdio'],
    defaultText: DEFAULTS.transport,
    help: 'Transport of the MCP server',
    section: 'identity',
    // stdio has no target port or host.
    runConfig: ['transport', 'target_port', 'target_host'],
  },
  {
    long: 'proxy-mode',
    type: 'string',
    value: '<mode>',
    choices: PROXY_MODES,
    default: DEFAULTS.proxyMode,
    help: 'Proxy mode for stdio (sse is deprecated and will be removed)',
    section: 'identity',
    runConfig: ['proxy_mode'],
  },
  {
    long: 'proxy-port',
    type: 'int',
    value: '<port>',
    ...PORT,
    defaultText: 'a free port',
    help: 'Host port the HTTP proxy listens on',
    section: 'identity',
    runConfig: ['port'],
  },
  {
    long: 'host',
    type: 'string',
    value: '<host>',
    default: DEFAULTS.host,
    help: 'IPv4 address or hostname the HTTP proxy listens on',
    section: 'identity',
    runConfig: ['host'],
  },
  {
    long: 'target-host',
    type: 'string',
    value: '<host>',
    default: DEFAULTS.targetHost,
    help: 'Host traffic is forwarded to; only for sse or streamable-http transport',
    section: 'identity',
    runConfig: ['target_host'],
  },
  {
    long: 'target-port',
    type: 'int',
    value: '<port>',
    ...PORT,
    defaultText: 'a free port',
    help: 'Port the container exposes; only for sse or streamable-http transport',
    section: 'identity',
    runConfig: ['target_port'],
  },
  {
    long: 'publish',
    short: 'p',
    type: 'stringArray',
    value: '<hostPort:containerPort>',
    help: 'Publish a container port (repeatable)',
    section: 'identity',
    runConfig: ['publish'],
  },
  {
    long: 'label',
    short: 'l',
    type: 'stringArray',
    value: '<key=value>',
    help: 'Container label (repeatable)',
    section: 'identity',
    runConfig: ['container_labels'],
  },
  {
    long: 'volume',
    short: 'v',
    type: 'stringArray',
    value: '<host-path:container-path[:ro]>',
    help: 'Mount a host path into the container (repeatable; the host path must exist)',
    section: 'identity',
    runConfig: ['volumes'],
  },
  {
    long: 'env',
    short: 'e',
    type: 'stringArray',
    value: '<KEY=VALUE>',
    help: 'Environment variable (repeatable; overrides --env-file and --env-file-dir)',
    section: 'identity',
    runConfig: ['env_vars'],
  },
  {
    long: 'env-file',
    type: 'string',
    value: '<path>',
    help: 'Load environment variables from one file when the container starts (overrides --env-file-dir)',
    section: 'identity',
    runConfig: ['env_file'],
  },
  {
    long: 'env-file-dir',
    type: 'string',
    value: '<dir>',
    help: 'Load environment variables from all files in a directory when the container starts',
    section: 'identity',
    runConfig: ['env_file_dir'],
  },
  {
    long: 'secret',
    type: 'stringArray',
    value: '<NAME,target=TARGET>',
    help: 'Secret from the secrets manager set as environment variable TARGET (repeatable; overrides --env)',
    section: 'identity',
    runConfig: ['secrets'],
  },
  {
    long: 'stateless',
    type: 'bool',
    default: false,
    help: 'Declare the server stateless (POST-only, no SSE) for streamable-HTTP stateless mode',
    section: 'identity',
    runConfig: ['stateless'],
  },
  {
    long: 'ignore-globally',
    type: 'bool',
    default: true,
    help: 'Also apply the global ignore file (moatignore in the configuration directory) to every mounted directory',
    section: 'identity',
    runConfig: ['ignore_config.LoadGlobal'],
  },
  {
    long: 'print-resolved-overlays',
    type: 'bool',
    default: false,
    help: 'Debug: print the container paths hidden by ignore files, then start as usual',
    section: 'identity',
    runConfig: ['ignore_config.PrintOverlays'],
  },
  {
    long: 'help',
    short: 'h',
    type: 'bool',
    default: false,
    help: 'Show help for run',
    section: 'identity',
    runConfig: [],
  },
  {
    long: 'debug',
    type: 'bool',
    default: false,
    help: 'Enable debug mode (inherited; also MOAT_DEBUG=true)',
    section: 'identity',
    runConfig: ['debug'],
  },

  // Isolation and permissions
  {
    long: 'network',
    type: 'string',
    value: '<mode>',
    defaultText: 'bridge',
    help: 'Network to connect to (bridge, host, none or a network name); host and none drop isolation',
    section: 'isolation',
    // Isolation needs bridge networking; other modes turn it off.
    runConfig: ['permission_profile.network.mode', 'isolate_network'],
  },
  {
    long: 'isolate-network',
    type: 'bool',
    default: true,
    help: 'Isolate the container network from the host (--isolate-network=false to opt out)',
    section: 'isolation',
    runConfig: ['isolate_network'],
  },
  {
    long: 'allow-docker-gateway',
    type: 'bool',
    default: false,
    help: "Allow outbound connections to the runtime's gateway addresses (only with --isolate-network)",
    section: 'isolation',
    runConfig: ['allow_docker_gateway'],
  },
  {
    long: 'permission-profile',
    type: 'string',
    value: '<profile>',
    defaultText: DEFAULTS.permissionProfile,
    help: 'Permission profile: none, network, or the path of a JSON profile',
    section: 'isolation',
    runConfig: ['permission_profile_name_or_path', 'permission_profile'],
  },
  {
    long: 'image-verification',
    type: 'string',
    value: '<mode>',
    choices: ['warn', 'enabled', 'disabled'],
    default: DEFAULTS.imageVerification,
    help: "Check the image's Sigstore signature against its registry provenance: enabled refuses an unverified image, warn runs it with a warning, disabled skips",
    section: 'isolation',
    runConfig: ['image_verification'],
  },

  // Build-time options (protocol schemes)
  {
    long: 'build-with',
    type: 'stringArray',
    value: '<constraint>',
    help: 'Build-time dependency constraint (uvx:// only: a PEP 508 specifier for --with; repeatable)',
    section: 'build',
    runConfig: ['runtime_config.build_with'],
  },
  {
    long: 'ca-cert',
    type: 'string',
    value: '<path>',
    help: 'PEM CA certificate trusted in both stages of a protocol-scheme build (e.g. a TLS-inspecting proxy)',
    section: 'build',
    runConfig: ['runtime_config.ca_cert_path'],
  },
  {
    long: 'runtime-add-package',
    type: 'stringArray',
    value: '<package>',
    help: 'Extra OS package installed in the builder and runtime stages (apk or apt-get; repeatable)',
    section: 'build',
    runConfig: ['runtime_config.additional_packages'],
  },
  {
    long: 'runtime-image',
    type: 'string',
    value: '<image>',
    defaultText: 'per ecosystem, see docs/builds.md',
    help: 'Base image of protocol-scheme builds (builder stage; also the runtime stage for npx:// and uvx://)',
    section: 'build',
    runConfig: ['runtime_config.builder_image'],
  },
  {
    long: 'thv-ca-bundle',
    type: 'string',
    value: '<path>',
    help: "CA certificate bundle for moat's own HTTP requests (JWKS, OIDC discovery)",
    section: 'build',
    runConfig: ['thv_ca_bundle', 'oidc_config.CACertPath'],
  },

  // HTTP proxy behavior
  {
    long: 'allowed-origins',
    type: 'stringArray',
    value: '<origin>',
    defaultText: 'derived for loopback binds',
    help: 'Exact-match allowlist for the HTTP Origin header (repeatable); recommended for public binds',
    section: 'proxy',
    runConfig: ['allowed_origins'],
  },
  {
    long: 'endpoint-prefix',
    type: 'string',
    value: '<path>',
    help: "Path prefix prepended to SSE endpoint URLs (must start with '/')",
    section: 'proxy',
    runConfig: ['endpoint_prefix'],
  },
  {
    long: 'max-request-body-size',
    type: 'int',
    value: '<bytes>',
    min: 0,
    default: 0,
    defaultText: mebibytes(DEFAULTS.maxRequestBodySize),
    help: 'Maximum inbound request body size in bytes; 0 uses the default',
    section: 'proxy',
    runConfig: ['max_request_body_size'],
  },
  {
    long: 'proxy-read-timeout',
    type: 'duration',
    value: '<duration>',
    default: 0,
    defaultText: formatDurationShort(DEFAULTS.proxyReadTimeoutMs),
    help: 'Maximum time to read a full request; 0 uses the default',
    section: 'proxy',
    runConfig: ['proxy_read_timeout'],
  },
  {
    long: 'rate-limit',
    type: 'int',
    value: '<n>',
    min: 0,
    default: 0,
    defaultText: 'off',
    help: 'Requests per minute per principal (token bucket, burst = one minute); 0 is no limit',
    section: 'proxy',
    runConfig: ['rate_limit.per_principal'],
  },
  {
    long: 'tool-rate-limit',
    type: 'int',
    value: '<n>',
    min: 0,
    default: 0,
    defaultText: 'off',
    help: 'tools/call per minute per principal and tool; 0 is no limit',
    section: 'proxy',
    runConfig: ['rate_limit.per_tool'],
  },
  {
    long: 'rate-limit-fail-open',
    type: 'bool',
    default: false,
    help: 'Allow requests when the shared rate limit store (Redis) fails, instead of answering 503',
    section: 'proxy',
    runConfig: ['rate_limit.on_store_failure'],
  },
  {
    long: 'upstream-timeout',
    type: 'duration',
    value: '<duration>',
    default: 0,
    defaultText: formatDurationShort(DEFAULTS.upstreamTimeoutMs),
    help: "Maximum time to wait for the backend's answer to a request (HTTP or stdio); 0 uses the default",
    section: 'proxy',
    runConfig: ['upstream_timeout'],
  },
  {
    long: 'request-state-ttl',
    type: 'duration',
    value: '<duration>',
    default: 0,
    defaultText: formatDurationShort(DEFAULTS.requestStateTtlMs),
    help: "How long a 2026-07-28 client has to answer a backend's input requests (the requestState of a multi round-trip request); 0 uses the default",
    section: 'proxy',
    runConfig: ['request_state_ttl'],
  },
  {
    long: 'session-ttl',
    type: 'duration',
    value: '<duration>',
    default: 0,
    defaultText: formatDurationShort(DEFAULTS.sessionTtlMs),
    help: 'Session inactivity timeout; 0 uses the default',
    section: 'proxy',
    runConfig: ['session_ttl'],
  },
  {
    long: 'strict-protocol-validation',
    type: 'bool',
    default: false,
    help: 'Streamable-HTTP only: reject an unknown MCP-Protocol-Version header with HTTP 400',
    section: 'proxy',
    runConfig: ['strict_protocol_validation'],
  },
  {
    long: 'trust-proxy-headers',
    type: 'bool',
    default: false,
    help: 'Trust X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Port and X-Forwarded-Prefix',
    section: 'proxy',
    runConfig: ['trust_proxy_headers'],
  },

  // Tools
  {
    long: 'tools',
    type: 'stringArray',
    commaSeparated: true,
    value: '<names>',
    help: "Filter the server's tools: comma-separated list of tool names (repeatable)",
    section: 'tools',
    runConfig: ['tools_filter'],
  },
  {
    long: 'tools-override',
    type: 'string',
    value: '<path>',
    help: 'JSON file overriding tool names and descriptions ({"toolsOverride": {...}})',
    section: 'tools',
    runConfig: ['tools_override'],
  },

  {
    long: 'tool-pinning',
    type: 'string',
    value: '<mode>',
    choices: ['off', 'warn', 'enforce'],
    default: 'warn',
    help: 'Pin tool definitions on first sight: warn logs and audits a changed tool, enforce also hides it until `moat tools approve`, off records nothing',
    section: 'tools',
    runConfig: ['tool_pinning'],
  },

  // Audit, authorization and webhook files
  {
    long: 'enable-audit',
    type: 'bool',
    default: false,
    help: 'Enable audit logging with the default configuration',
    section: 'policy',
    runConfig: ['audit_config'],
  },
  {
    long: 'audit-config',
    type: 'string',
    value: '<path>',
    help: 'Audit configuration file',
    section: 'policy',
    runConfig: ['audit_config_path'],
  },
  {
    long: 'authz-config',
    type: 'string',
    value: '<path>',
    help: 'Authorization configuration file',
    section: 'policy',
    runConfig: ['authz_config_path'],
  },
  {
    long: 'webhook-config',
    type: 'stringArray',
    value: '<path>',
    help: 'Webhook configuration file (repeatable; files are merged, later names win)',
    section: 'policy',
    runConfig: ['validating_webhooks', 'mutating_webhooks'],
  },

  // Incoming-client OIDC validation
  {
    long: 'oidc-issuer',
    type: 'string',
    value: '<url>',
    help: 'OIDC issuer URL',
    section: 'oidc',
    runConfig: ['oidc_config.Issuer'],
  },
  {
    long: 'oidc-audience',
    type: 'string',
    value: '<audience>',
    help: 'Expected token audience',
    section: 'oidc',
    runConfig: ['oidc_config.Audience'],
  },
  {
    long: 'oidc-client-id',
    type: 'string',
    value: '<id>',
    help: 'OIDC client ID',
    section: 'oidc',
    runConfig: ['oidc_config.ClientID'],
  },
  {
    long: 'oidc-client-secret',
    type: 'string',
    value: '<secret>',
    help: 'OIDC client secret, optional, for introspection',
    section: 'oidc',
    runConfig: ['oidc_config.ClientSecret'],
  },
  {
    long: 'oidc-introspection-url',
    type: 'string',
    value: '<url>',
    help: 'Token introspection endpoint',
    section: 'oidc',
    runConfig: ['oidc_config.IntrospectionURL'],
  },
  {
    long: 'oidc-jwks-url',
    type: 'string',
    value: '<url>',
    help: 'URL to fetch the JWKS from',
    section: 'oidc',
    runConfig: ['oidc_config.JWKSURL'],
  },
  {
    long: 'oidc-scopes',
    type: 'strings',
    value: '<scopes>',
    defaultText: DEFAULTS.oidcScopes.join(','),
    help: 'Scopes advertised in the protected-resource metadata (RFC 9728), comma-separated',
    section: 'oidc',
    runConfig: ['oidc_config.Scopes'],
  },
  {
    long: 'oidc-insecure-allow-http',
    type: 'bool',
    default: false,
    help: 'Allow HTTP (non-HTTPS) issuers for local development; insecure',
    section: 'oidc',
    runConfig: ['oidc_config.InsecureAllowHTTP'],
  },
  {
    long: 'jwks-allow-private-ip',
    type: 'bool',
    default: false,
    help: 'Allow JWKS/OIDC endpoints on private IP addresses',
    section: 'oidc',
    runConfig: ['oidc_config.AllowPrivateIP'],
  },
  {
    long: 'jwks-auth-token-file',
    type: 'string',
    value: '<path>',
    help: 'File holding a bearer token for JWKS/OIDC requests',
    section: 'oidc',
    runConfig: ['jwks_auth_token_file', 'oidc_config.AuthTokenFile'],
  },
  {
    long: 'resource-url',
    type: 'string',
    value: '<url>',
    help: 'Explicit resource URL for the OAuth discovery endpoint (RFC 9728)',
    section: 'oidc',
    runConfig: ['oidc_config.ResourceURL'],
  },

  // Authentication to a remote MCP server
  {
    long: 'remote-auth',
    type: 'bool',
    default: false,
    help: 'Enable OAuth/OIDC authentication to the remote server',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.enabled'],
  },
  {
    long: 'remote-auth-issuer',
    type: 'string',
    value: '<url>',
    help: 'OAuth/OIDC issuer URL',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.issuer'],
  },
  {
    long: 'remote-auth-authorize-url',
    type: 'string',
    value: '<url>',
    help: 'Authorization endpoint; alternative to --remote-auth-issuer for non-OIDC OAuth',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.authorize_url'],
  },
  {
    long: 'remote-auth-token-url',
    type: 'string',
    value: '<url>',
    help: 'Token endpoint; alternative to --remote-auth-issuer for non-OIDC OAuth',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.token_url'],
  },
  {
    long: 'remote-auth-client-id',
    type: 'string',
    value: '<id>',
    help: 'OAuth client ID; optional if the server supports dynamic client registration',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.client_id'],
  },
  {
    long: 'remote-auth-client-metadata-url',
    type: 'string',
    value: '<url>',
    help: 'URL of a client ID metadata document (CIMD), used as the client ID where the server supports it',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.client_metadata_url'],
  },
  {
    long: 'remote-auth-client-secret',
    type: 'string',
    value: '<secret>',
    help: 'OAuth client secret; optional with dynamic client registration or PKCE',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.client_secret'],
  },
  {
    long: 'remote-auth-client-secret-file',
    type: 'string',
    value: '<path>',
    help: 'File holding the OAuth client secret; alternative to --remote-auth-client-secret',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.client_secret_file'],
  },
  {
    long: 'remote-auth-bearer-token',
    type: 'string',
    value: '<token>',
    help: 'Bearer token; alternative to OAuth',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.bearer_token'],
  },
  {
    long: 'remote-auth-bearer-token-file',
    type: 'string',
    value: '<path>',
    help: 'File holding the bearer token; alternative to --remote-auth-bearer-token',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.bearer_token_file'],
  },
  {
    long: 'remote-auth-scopes',
    type: 'strings',
    value: '<scopes>',
    defaultText: `${DEFAULTS.remoteAuthOidcScopes.join(',')} with OIDC`,
    help: 'Scopes to request, comma-separated',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.scopes'],
  },
  {
    long: 'remote-auth-scope-param-name',
    type: 'string',
    value: '<name>',
    help: 'Query parameter name used for scopes in the authorization URL',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.scope_param_name'],
  },
  {
    long: 'remote-auth-resource',
    type: 'string',
    value: '<uri>',
    help: 'OAuth 2.0 resource indicator (RFC 8707)',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.resource'],
  },
  {
    long: 'remote-auth-callback-port',
    type: 'int',
    value: '<port>',
    ...PORT,
    default: DEFAULTS.remoteAuthCallbackPort,
    help: 'Port of the OAuth callback server',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.callback_port'],
  },
  {
    long: 'remote-auth-skip-browser',
    type: 'bool',
    default: false,
    help: 'Do not open a browser for the OAuth flow',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.skip_browser'],
  },
  {
    long: 'remote-auth-timeout',
    type: 'duration',
    value: '<duration>',
    default: DEFAULTS.remoteAuthTimeoutMs,
    defaultText: formatDurationShort(DEFAULTS.remoteAuthTimeoutMs),
    help: 'Timeout of the OAuth authentication flow',
    section: 'remoteAuth',
    runConfig: ['remote_auth_config.timeout'],
  },
  {
    long: 'remote-forward-headers',
    type: 'stringArray',
    value: '<Name=Value>',
    help: 'Header injected into requests to the remote server (repeatable)',
    section: 'remoteAuth',
    runConfig: ['header_forward.add_plaintext_headers'],
  },
  {
    long: 'remote-forward-headers-secret',
    type: 'stringArray',
    value: '<Name=secret-name>',
    help: 'Header whose value comes from the secrets manager (repeatable)',
    section: 'remoteAuth',
    runConfig: ['header_forward.add_headers_from_secret'],
  },

  // Token exchange
  {
    long: 'token-exchange-url',
    type: 'string',
    value: '<url>',
    help: 'OAuth 2.0 token-exchange endpoint; setting it enables token exchange',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.token_url'],
  },
  {
    long: 'token-exchange-audience',
    type: 'string',
    value: '<audience>',
    help: 'Target audience of exchanged tokens',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.audience'],
  },
  {
    long: 'token-exchange-client-id',
    type: 'string',
    value: '<id>',
    help: 'Client ID for exchange operations',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.client_id'],
  },
  {
    long: 'token-exchange-client-secret',
    type: 'string',
    value: '<secret>',
    help: 'Client secret for exchange operations',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.client_secret'],
  },
  {
    long: 'token-exchange-client-secret-file',
    type: 'string',
    value: '<path>',
    help: 'File holding the client secret; alternative to --token-exchange-client-secret',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.client_secret_file'],
  },
  {
    long: 'token-exchange-header-name',
    type: 'string',
    value: '<header>',
    defaultText: 'replaces the Authorization header',
    help: 'Custom header that carries the exchanged token',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.external_token_header_name', 'token_exchange_config.header_strategy'],
  },
  {
    long: 'token-exchange-scopes',
    type: 'strings',
    value: '<scopes>',
    help: 'Scopes requested for exchanged tokens, comma-separated',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.scopes'],
  },
  {
    long: 'token-exchange-subject-token-type',
    type: 'string',
    value: '<type>',
    choices: ['access_token', 'id_token'],
    default: 'access_token',
    help: 'Type of the subject token (id_token for security-token services that need it)',
    section: 'tokenExchange',
    runConfig: ['token_exchange_config.subject_token_type'],
  },

  // Telemetry
  {
    long: 'otel-endpoint',
    type: 'string',
    value: '<url>',
    help: 'OTLP endpoint URL',
    section: 'telemetry',
    runConfig: ['telemetry_config.endpoint'],
  },
  {
    long: 'otel-protocol',
    type: 'string',
    value: '<protocol>',
    choices: OTLP_PROTOCOL_NAMES,
    default: 'http/json',
    help: 'OTLP protocol: http/json (receivers listen on 4318) or grpc (4317)',
    section: 'telemetry',
    runConfig: ['telemetry_config.protocol'],
  },
  {
    long: 'otel-insecure',
    type: 'bool',
    default: false,
    help: 'Use HTTP instead of HTTPS to reach the OTLP endpoint',
    section: 'telemetry',
    runConfig: ['telemetry_config.insecure'],
  },
  {
    long: 'otel-headers',
    type: 'stringArray',
    value: '<key=value>',
    help: 'OTLP header (repeatable)',
    section: 'telemetry',
    runConfig: ['telemetry_config.headers'],
  },
  {
    long: 'otel-service-name',
    type: 'string',
    value: '<name>',
    defaultText: 'moat-<workload-name>',
    help: 'Service name',
    section: 'telemetry',
    runConfig: ['telemetry_config.serviceName'],
  },
  {
    long: 'otel-custom-attributes',
    type: 'string',
    value: '<key=value,...>',
    help: 'Resource attributes, format key=value,key=value',
    section: 'telemetry',
    runConfig: ['telemetry_config.customAttributes'],
  },
  {
    long: 'otel-env-vars',
    type: 'stringArray',
    commaSeparated: true,
    value: '<names>',
    help: 'Environment variable names included in spans (comma-separated, repeatable)',
    section: 'telemetry',
    runConfig: ['telemetry_config.environmentVariables'],
  },
  {
    long: 'otel-sampling-rate',
    type: 'float',
    value: '<rate>',
    min: 0,
    max: 1,
    default: DEFAULTS.otelSamplingRate,
    help: 'Trace sampling rate, 0.0 to 1.0',
    section: 'telemetry',
    runConfig: ['telemetry_config.samplingRate'],
  },
  {
    long: 'otel-tracing-enabled',
    type: 'bool',
    default: true,
    help: 'Distributed tracing, effective when an OTLP endpoint is set',
    section: 'telemetry',
    runConfig: ['telemetry_config.tracingEnabled'],
  },
  {
    long: 'otel-metrics-enabled',
    type: 'bool',
    default: true,
    help: 'OTLP metrics export, effective when an OTLP endpoint is set',
    section: 'telemetry',
    runConfig: ['telemetry_config.metricsEnabled'],
  },
  {
    long: 'otel-enable-prometheus-metrics-path',
    type: 'bool',
    default: false,
    help: 'Serve Prometheus /metrics on a dedicated diagnostics port',
    section: 'telemetry',
    runConfig: ['telemetry_config.enablePrometheusMetricsPath'],
  },
  {
    long: 'otel-metrics-on-transport-port',
    type: 'bool',
    default: true,
    help: 'Also serve Prometheus /metrics on the transport port (deprecated; the default will become false)',
    section: 'telemetry',
    runConfig: ['telemetry_config.metricsOnTransportPort'],
  },
  {
    long: 'otel-use-legacy-attributes',
    type: 'bool',
    default: true,
    help: 'Emit legacy attribute names alongside the semantic-convention names',
    section: 'telemetry',
    runConfig: ['telemetry_config.useLegacyAttributes'],
  },
] as const satisfies readonly RunFlagSpec[];

export type RunFlagRow = (typeof RUN_FLAGS)[number];
export type RunFlagName = RunFlagRow['long'];

/** `proxy-read-timeout` → `proxyReadTimeout`, as commander names option values. */
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

type ValueOf<R extends RunFlagRow> = R['type'] extends 'bool'
  ? boolean
  : R['type'] extends 'stringArray' | 'strings'
    ? string[]
    : R['type'] extends 'int' | 'float' | 'duration'
      ? R extends { default: number }
        ? number
        : number | undefined
      : R extends { choices: readonly (infer C)[]; default: string }
        ? C
        : R extends { choices: readonly (infer C)[] }
          ? C | undefined
          : R extends { default: string }
            ? string
            : string | undefined;

/** Parsed flag values, keyed like commander's opts(); durations are milliseconds. */
export type RunFlags = {
  [R in RunFlagRow as R['long'] extends 'help' ? never : Camel<R['long']>]: ValueOf<R>;
};

export function attributeName(long: string): string {
  return long.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

export function flagRow(long: RunFlagName): RunFlagRow {
  return RUN_FLAGS.find((row) => row.long === long) as RunFlagRow;
}

/** The default values of every flag, as parsing with no flags would give. */
export function defaultRunFlags(): RunFlags {
  const flags: Record<string, unknown> = {};
  for (const row of RUN_FLAGS as readonly RunFlagSpec[]) {
    if (row.long === 'help') continue;
    const isList = row.type === 'stringArray' || row.type === 'strings';
    flags[attributeName(row.long)] = isList ? [] : row.default;
  }
  return flags as RunFlags;
}
