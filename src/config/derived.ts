/**
 * Facts derived from a RunConfig, each with its default applied, one function each, so the CLI,
 * the supervisor, `moat list` and the proxy cannot disagree. Durations come back in
 * milliseconds: the file keeps Go duration strings and nanoseconds (ToolHive's forms), and the
 * schema has already refused values these functions could not read. Like defaults.ts, this
 * module does not load zod.
 */
import { NS_PER_MS, parseDuration } from '../util/duration.js';
import { usageError } from '../util/errors.js';
import { DEFAULTS, DURATION_FORM } from './defaults.js';
import type { ProxyMode, RemoteAuthConfig, RunConfig, SessionRedis, Webhook } from './runconfig.js';

/** Client paths of the two HTTP transports. */
export const STREAMABLE_HTTP_PATH = '/mcp';
export const SSE_PATH = '/sse';

/**
 * The transport the proxy serves to clients: `proxy_mode` for a stdio server, otherwise the
 * server's own transport (the proxy does not translate between HTTP transports, so for an HTTP
 * or remote server this is also the transport it speaks to the server).
 */
export function clientTransport(config: Pick<RunConfig, 'transport' | 'proxy_mode'>): ProxyMode {
  return config.transport === 'stdio' ? (config.proxy_mode ?? DEFAULTS.proxyMode) : config.transport;
}

/**
 * The path MCP clients use: `/mcp` for streamable HTTP, `/sse` for the legacy SSE transport; a
 * remote workload keeps the remote URL's path (the proxy forwards every path there).
 */
export function clientPath(config: Pick<RunConfig, 'transport' | 'proxy_mode' | 'remote_url'>): string {
  if (config.remote_url) {
    const path = new URL(config.remote_url).pathname;
    return path === '/' ? STREAMABLE_HTTP_PATH : path;
  }
  return clientTransport(config) === 'sse' ? SSE_PATH : STREAMABLE_HTTP_PATH;
}

/**
 * True when the workload runs a container: not a remote URL, not an aggregate of a group. One
 * without a readable config may have one (so stop and rm still look for it).
 */
export function runsContainer(config: Pick<RunConfig, 'remote_url' | 'aggregate'> | undefined): boolean {
  return !config?.remote_url && config?.aggregate === undefined;
}

/** The workload's group; a workload without a readable config is in the default group. */
export function groupOf(config: Pick<RunConfig, 'group'> | undefined): string {
  return config?.group ?? DEFAULTS.group;
}

function durationMs(field: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const ms = parseDuration(text);
  // Only a config that skipped the schema gets here with a bad value.
  if (ms === undefined || ms <= 0) throw usageError(`${field} ${JSON.stringify(text)}: ${DURATION_FORM}`);
  return ms;
}

/** The sliding session TTL (`session_ttl`, default 2h). */
export function sessionTtlMs(config: Pick<RunConfig, 'session_ttl'>): number {
  return durationMs('session_ttl', config.session_ttl, DEFAULTS.sessionTtlMs);
}

/** How long the edge waits for a whole request (`proxy_read_timeout`, default 30s). */
export function proxyReadTimeoutMs(config: Pick<RunConfig, 'proxy_read_timeout'>): number {
  return durationMs('proxy_read_timeout', config.proxy_read_timeout, DEFAULTS.proxyReadTimeoutMs);
}

/** How long the proxy waits for a backend's answer, HTTP or stdio (`upstream_timeout`, default 5m). */
export function upstreamTimeoutMs(config: Pick<RunConfig, 'upstream_timeout'>): number {
  return durationMs('upstream_timeout', config.upstream_timeout, DEFAULTS.upstreamTimeoutMs);
}

/** How long a multi round-trip request's `requestState` stays good (`request_state_ttl`, default 5m). */
export function requestStateTtlMs(config: Pick<RunConfig, 'request_state_ttl'>): number {
  return durationMs('request_state_ttl', config.request_state_ttl, DEFAULTS.requestStateTtlMs);
}

/** The OAuth flow timeout (`remote_auth_config.timeout`, nanoseconds; absent or 0 means 30s). */
export function remoteAuthTimeoutMs(auth: Pick<RemoteAuthConfig, 'timeout'> | undefined): number {
  return auth?.timeout ? Math.round(auth.timeout / NS_PER_MS) : DEFAULTS.remoteAuthTimeoutMs;
}

/** One webhook call's timeout (`timeout`, nanoseconds; absent or 0 means 10s). */
export function webhookTimeoutMs(hook: Pick<Webhook, 'timeout'>): number {
  return hook.timeout ? hook.timeout / NS_PER_MS : DEFAULTS.webhookTimeoutMs;
}

/** How long one Redis command may take (`scaling_config.session_redis.command_timeout`, default 2s). */
export function redisCommandTimeoutMs(redis: Pick<SessionRedis, 'command_timeout'>): number {
  return durationMs(
    'scaling_config.session_redis.command_timeout',
    redis.command_timeout,
    DEFAULTS.redisCommandTimeoutMs,
  );
}
