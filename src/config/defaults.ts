/**
 * RunConfig defaults, format version, the secret-reference pattern and the value lists the flag
 * table offers, without the schema: the proxy, the supervisor and `moat --help` read these, and
 * importing them must not load zod (about 5 MB resident, and most of a command's start-up).
 * DEFAULTS is the one source of every default: the flag table, `moat run --help`, docs/cli.md and
 * the functions of derived.ts read it.
 */
import { parseDuration } from '../util/duration.js';

/** The RunConfig format version (ToolHive's). */
export const SCHEMA_VERSION = 'v0.1.0';

/** A secret reference, never a value: `NAME,target=TARGET`. */
export const SECRET_REF = /^([^,]+),target=(.+)$/;

/** What clients speak to the proxy (the RunConfig's `proxy_mode`); also a `moat run` flag's choices. */
export const PROXY_MODES = ['streamable-http', 'sse'] as const;

/**
 * The OTLP protocols as users name them (OpenTelemetry's `OTEL_EXPORTER_OTLP_PROTOCOL` vocabulary:
 * Moat's OTLP/HTTP exporter sends JSON); runConfigOtlpProtocol maps each to the RunConfig's.
 */
export const OTLP_PROTOCOL_NAMES = ['http/json', 'grpc'] as const;

export const DEFAULTS = {
  host: '127.0.0.1',
  targetHost: '127.0.0.1',
  group: 'default',
  transport: 'streamable-http' as Transport,
  /** The client side of a stdio server. */
  proxyMode: 'streamable-http' as ProxyMode,
  /** A builtin profile name (runtime/permissions.ts). */
  permissionProfile: 'network',
  maxRequestBodySize: 8 * 1024 * 1024,
  proxyReadTimeoutMs: 30_000,
  /** A tool call may legitimately run for minutes; a backend silent for longer is stuck. */
  upstreamTimeoutMs: 5 * 60 * 1000,
  sessionTtlMs: 2 * 60 * 60 * 1000,
  /** How long a client has to answer a multi round-trip request's input requests. */
  requestStateTtlMs: 5 * 60 * 1000,
  /** A Redis that does not answer one command within this (frozen, overloaded) fails the request. */
  redisCommandTimeoutMs: 2000,
  imageVerification: 'warn',
  /** Scopes the protected-resource metadata advertises when --oidc-scopes is not given. */
  oidcScopes: ['openid'],
  /** Scopes asked of an OpenID provider when --remote-auth-scopes is not given. */
  remoteAuthOidcScopes: ['openid', 'profile', 'email'],
  otelSamplingRate: 0.1,
  remoteAuthCallbackPort: 8666,
  remoteAuthTimeoutMs: 30_000,
  webhookTimeoutMs: 10_000,
} as const;

export const TRANSPORTS = ['stdio', 'sse', 'streamable-http'] as const;

/** The aggregate's naming strategies (aggregate.ts); here, without zod, for `moat group serve`'s help. */
export const NAMING_STRATEGIES = ['prefix', 'priority', 'manual'] as const;

/** The default between a member's name and its tool's under `prefix`: `time__now`. */
export const DEFAULT_NAME_SEPARATOR = '__';
export type Transport = (typeof TRANSPORTS)[number];

export type ProxyMode = (typeof PROXY_MODES)[number];

/** What a duration field of the RunConfig allows (the schema's message too). */
export const DURATION_FORM = 'expected a positive duration such as 30s, 5m or 2h0m0s';

/** A Go duration string greater than zero. */
export function isPositiveDuration(text: string): boolean {
  const ms = parseDuration(text);
  return ms !== undefined && ms > 0;
}
