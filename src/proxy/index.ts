/**
 * Starts the proxy for one workload: the HTTP edge on `config.host:config.port`, the policies the
 * RunConfig asks for, a session store, and the transport handler for the backend (the HTTP
 * forwarder for streamable-HTTP/SSE servers and remote URLs, the stdio bridge for stdio servers).
 */
import type { Logger } from 'pino';
import { DEFAULTS } from '../config/defaults.js';
import { clientTransport, proxyReadTimeoutMs, sessionTtlMs } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { log } from '../util/log.js';
import { createEdge, type EdgeRoute, type HealthReport } from './edge/server.js';
import { buildPolicies } from './pipeline/build.js';
import { createSessionStore } from './sessions/index.js';
import { createStdioBridge } from './transports/bridge/index.js';
import { createHttpForwarder } from './transports/http/forwarder.js';
import type {
  BackendSpec,
  EdgeMiddleware,
  MessagePolicy,
  SessionStore,
  TransportHandler,
  UpstreamAuth,
} from './types.js';

export type { EdgeRoute, HealthReport } from './edge/server.js';

export type HttpBackend = Extract<BackendSpec, { kind: 'http' }>;
export type StdioBackend = Extract<BackendSpec, { kind: 'stdio' }>;

/** What every transport handler is built from. */
export interface TransportOptions {
  config: RunConfig;
  /** The full message policy chain (from the RunConfig, then the caller's extra ones). */
  policies: readonly MessagePolicy[];
  sessions: SessionStore;
  sessionTtlMs: number;
  /** Interval of `:` keep-alive comments on idle SSE streams. */
  keepAliveMs: number;
  logger: Logger;
}

export interface ProxyOptions {
  logger?: Logger;
  /** Edge middlewares (authentication, audit, ...), outermost first. */
  middlewares?: EdgeMiddleware[];
  /** Policies run after the ones the RunConfig asks for. */
  policies?: MessagePolicy[];
  /** Outbound credentials for HTTP backends. */
  upstreamAuth?: UpstreamAuth;
  /** Extra handlers outside the middleware chain (e.g. /.well-known/oauth-protected-resource). */
  routes?: EdgeRoute[];
  /** Keep-alive comment interval on idle SSE streams (default 25 s). */
  keepAliveMs?: number;
  /** A session store to use instead of the one the RunConfig selects (the caller keeps ownership). */
  sessions?: SessionStore;
}

export interface RunningProxy {
  /** Base URL of the listener, e.g. http://127.0.0.1:43123 (no path). */
  url: string;
  port: number;
  close(): Promise<void>;
}

const DEFAULT_KEEP_ALIVE_MS = 25_000;

export async function startProxy(
  config: RunConfig,
  backend: BackendSpec,
  options: ProxyOptions = {},
): Promise<RunningProxy> {
  const logger = options.logger ?? log();
  const readTimeout = proxyReadTimeoutMs(config);
  const ttl = sessionTtlMs(config);
  const policies = [...buildPolicies(config), ...(options.policies ?? [])];
  const sessions = options.sessions ?? (await createSessionStore(config, { logger }));
  const transportOptions: TransportOptions = {
    config,
    policies,
    sessions,
    sessionTtlMs: ttl,
    keepAliveMs: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    logger,
  };
  let handler: TransportHandler & { backendHealth?(): Promise<HealthReport['backend']> };
  try {
    handler =
      backend.kind === 'http'
        ? createHttpForwarder(backend, { ...transportOptions, upstreamAuth: options.upstreamAuth })
        : await createStdioBridge(backend, transportOptions);
  } catch (err) {
    if (!options.sessions) await sessions.close();
    throw err;
  }

  const started = Date.now();
  const transport = clientTransport(config);
  const edge = createEdge({
    host: config.host,
    port: config.port,
    allowedOrigins: config.allowed_origins,
    maxBodyBytes: config.max_request_body_size ?? DEFAULTS.maxRequestBodySize,
    readTimeoutMs: readTimeout,
    trustProxyHeaders: config.trust_proxy_headers === true,
    strictProtocolValidation: config.strict_protocol_validation === true,
    stateless: config.stateless === true,
    middlewares: options.middlewares ?? [],
    routes: options.routes ?? [],
    handler,
    logger,
    health: async () => {
      const backendHealth = handler.backendHealth ? await handler.backendHealth() : undefined;
      return {
        status: backendHealth && !backendHealth.reachable ? 'degraded' : 'healthy',
        transport,
        uptime_seconds: Math.floor((Date.now() - started) / 1000),
        timestamp: new Date().toISOString(),
        ...(backendHealth ? { backend: backendHealth } : {}),
      };
    },
  });

  let port: number;
  try {
    port = await edge.listen();
  } catch (err) {
    await handler.close();
    if (!options.sessions) await sessions.close();
    throw err;
  }
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  logger.info({ url: `http://${host}:${port}`, transport, workload: config.name }, 'proxy listening');
  return {
    url: `http://${host}:${port}`,
    port,
    close: async () => {
      await edge.close();
      await handler.close();
      if (!options.sessions) await sessions.close();
    },
  };
}
