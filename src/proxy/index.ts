/**
 * Starts the proxy for one workload from its RunConfig alone: the chain the RunConfig asks for
 * (authentication, policies, audit, outbound credentials: see chain.ts), a session store, the
 * transport handler for the backend (the HTTP forwarder for streamable-HTTP/SSE servers and remote
 * URLs, the stdio bridge for stdio servers) and the HTTP edge on `config.host:config.port`. The
 * CLI's supervisor, `moat proxy` in a Kubernetes pod and the tests all start it this way.
 */
import type { Logger } from 'pino';
import type { RemoteAuthStatus } from '../auth/outbound/remote-oauth.js';
import type { UpstreamAuth } from '../auth/outbound/types.js';
import { DEFAULTS } from '../config/defaults.js';
import {
  clientPath,
  clientTransport,
  proxyReadTimeoutMs,
  sessionTtlMs,
  upstreamTimeoutMs,
} from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import type { SecretsProvider } from '../secrets/types.js';
import { log } from '../util/log.js';
import { buildChain } from './chain.js';
import { createEdge, type HealthReport } from './edge/server.js';
import { createSessionStore } from './sessions/index.js';
import { createStdioHandler } from './stdio/handler.js';
import { createHttpForwarder, SessionsRefused, type HttpForwarder } from './http/forwarder.js';
import { httpUpAdapter, type HttpUpAdapterOptions } from './http/eras/up.js';
import { httpRoute } from './eras/decision.js';
import type { InputBroker } from './eras/down/seam.js';
import { createMrtr } from './eras/rounds/index.js';
import type {
  BackendSpec,
  EdgeRequest,
  HttpBackend,
  SessionStore,
  TransportHandler,
  TransportOptions,
} from './types.js';

export type { EdgeRoute, HealthReport } from './edge/server.js';

export interface ProxyOptions {
  logger?: Logger;
  /** Secrets provider for the RunConfig's secret references (opened on first use when absent). */
  secrets?: () => Promise<SecretsProvider>;
  /** May an OAuth login to a remote server start now (a terminal in the foreground)? */
  interactiveAuth?: boolean;
  /** Outbound OAuth state changes (e.g. the remote needs a new login). */
  onAuthStatus?: (status: RemoteAuthStatus) => void;
  /** Outbound credentials to use instead of the ones the RunConfig configures (tests). */
  upstreamAuth?: UpstreamAuth;
  /** Keep-alive comment interval on idle SSE streams (default 25 s). */
  keepAliveMs?: number;
  /** A session store to use instead of the one the RunConfig selects (the caller keeps ownership). */
  sessions?: SessionStore;
  /**
   * Carries backend input requests of bridged 2026-07-28 requests to clients (eras/down/seam.ts);
   * default: the MRTR broker (eras/rounds/), with states and rounds shared through the session store's Redis.
   */
  inputBroker?: InputBroker;
}

export interface RunningProxy {
  /** Base URL of the listener, e.g. http://127.0.0.1:43123 (no path). */
  url: string;
  /** The URL MCP clients use: the base URL and the MCP endpoint path (`/mcp`, `/sse`, a remote's path). */
  endpoint: string;
  port: number;
  /** The dedicated Prometheus `/metrics` URL, when telemetry serves one. */
  metricsUrl?: string;
  close(): Promise<void>;
}

const DEFAULT_KEEP_ALIVE_MS = 25_000;

/**
 * The HTTP forwarder; for a streamable-HTTP backend with sessions (not `--stateless`), beside it
 * the reverse direction (http/eras/up.ts), which serves 2025-era clients itself when the backend
 * refuses their `initialize` and speaks 2026-07-28. The era decision routes (`httpRoute`).
 */
function httpHandler(backend: HttpBackend, options: HttpUpAdapterOptions): HttpForwarder {
  const forwarder = createHttpForwarder(backend, options);
  if (backend.transport !== 'streamable-http' || options.config.stateless === true) return forwarder;
  const reverse = httpUpAdapter(backend, options);
  const refused = (request: EdgeRequest) => (err: unknown) => {
    if (!(err instanceof SessionsRefused)) throw err;
    return reverse.initialize(request, err);
  };
  return {
    handle: (request) => {
      const route = httpRoute(request.req);
      if (route === 'reverse') return reverse.serveSession(request);
      if (route === 'initialize') return forwarder.handle(request).catch(refused(request));
      return forwarder.handle(request);
    },
    close: async () => {
      await reverse.close();
      await forwarder.close();
    },
    backendHealth: () => forwarder.backendHealth(),
  };
}

export async function startProxy(
  config: RunConfig,
  backend: BackendSpec,
  options: ProxyOptions = {},
): Promise<RunningProxy> {
  const logger = options.logger ?? log();
  const readTimeout = proxyReadTimeoutMs(config);
  const ttl = sessionTtlMs(config);
  const chain = await buildChain(config, {
    logger,
    remote: backend.kind === 'http' && backend.remote && options.upstreamAuth === undefined,
    ...(backend.kind === 'http' && backend.memberOf ? { memberOf: backend.memberOf } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.interactiveAuth === undefined ? {} : { interactiveAuth: options.interactiveAuth }),
    ...(options.onAuthStatus ? { onAuthStatus: options.onAuthStatus } : {}),
  });
  const owned: Array<() => Promise<void>> = [() => chain.close()];
  const closeOwned = async () => {
    for (const close of owned.reverse()) await close();
  };
  let handler: TransportHandler & { backendHealth?(): Promise<HealthReport['backend']> };
  let sessions: SessionStore;
  try {
    sessions = options.sessions ?? (await createSessionStore(config, { logger }));
    if (!options.sessions) owned.push(() => sessions.close());
    // Lazy: Redis is connected only when a round or a client's answer crosses replicas.
    const mrtr = createMrtr(config, { logger });
    owned.push(() => mrtr.close());
    const inputBroker = options.inputBroker ?? mrtr.broker;
    const transportOptions: TransportOptions = {
      config,
      policies: chain.policies,
      sessions,
      sessionTtlMs: ttl,
      upstreamTimeoutMs: upstreamTimeoutMs(config),
      keepAliveMs: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
      logger,
      ...(chain.telemetry?.propagation ? { tracePropagation: chain.telemetry.propagation } : {}),
      inputBroker,
    };
    const upstreamAuth = options.upstreamAuth ?? chain.upstreamAuth;
    handler =
      backend.kind === 'http'
        ? httpHandler(backend, { ...transportOptions, upstreamAuth, answerRelay: mrtr.relay })
        : await createStdioHandler(backend, transportOptions);
  } catch (err) {
    await closeOwned();
    throw err;
  }
  owned.push(() => handler.close());

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
    middlewares: chain.middlewares,
    observers: chain.observers,
    transport,
    routes: chain.routes,
    handler,
    logger,
    ...(backend.kind === 'http' && backend.memberOf ? { memberOf: backend.memberOf } : {}),
    health: async () => {
      const [backendHealth, storeProblem] = await Promise.all([
        handler.backendHealth ? handler.backendHealth() : undefined,
        sessions.problem?.(),
      ]);
      const degraded = backendHealth && !backendHealth.reachable;
      return {
        status: storeProblem !== undefined ? 'unhealthy' : degraded ? 'degraded' : 'healthy',
        ...(sessions.problem
          ? { session_store: storeProblem ? { ok: false, error: storeProblem } : { ok: true } }
          : {}),
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
    await chain.telemetry?.start();
  } catch (err) {
    await edge.close();
    await closeOwned();
    throw err;
  }
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  const metricsUrl = chain.telemetry?.metricsUrl;
  logger.info(
    { url, transport, workload: config.name, ...(metricsUrl ? { metricsUrl } : {}) },
    'proxy listening',
  );
  return {
    url,
    ...(metricsUrl ? { metricsUrl } : {}),
    endpoint: `${url}${clientPath(config)}`,
    port,
    close: async () => {
      await edge.close();
      await closeOwned();
    },
  };
}
