/**
 * The stdio bridge: one stdio MCP server shared by many HTTP client sessions.
 *
 *   createStdioHandler(backend: StdioBackend, options: StdioHandlerOptions): Promise<TransportHandler>
 *
 * Attaches to the server (`backend.connect()`, again with bounded backoff when the pipes end) and
 * serves, per `config.proxy_mode`, either streamable HTTP at `/mcp` (default) or the deprecated
 * HTTP+SSE pair `/sse` + `<endpoint_prefix>/messages`. The edge has already checked origin, body
 * size, content type, protocol version and the stateless method rules.
 */
import { SSE_PATH, STREAMABLE_HTTP_PATH, clientPath, clientTransport } from '../../config/derived.js';
import { runtimeError, errorMessage } from '../../util/errors.js';
import type { StdioBackend, TransportOptions } from '../types.js';
import { pathOf, type HealthReport } from '../edge/server.js';
import { reject } from '../pipeline/errors.js';
import { type EdgeRequest, type TransportHandler } from '../types.js';
import { ClientSessions } from './endpoints/sessions.js';
import { SseTransportEndpoint, messagesPath } from './endpoints/sse-transport.js';
import { Multiplexer } from './mux.js';
import { StreamableEndpoint } from './endpoints/streamable-http.js';
import { StdioUpstream } from './attach.js';
import { StdioDownAdapter } from './eras/down.js';
import { EraProcess } from './era-process.js';
import { RPC } from '../../mcp/jsonrpc.js';

export interface StdioHandlerOptions extends TransportOptions {
  /** Re-attach policy when the server's pipes end (defaults: 250 ms doubling to 5 s, 10 tries). */
  reattach?: { initialBackoffMs?: number; maxBackoffMs?: number; maxAttempts?: number };
}

const HEALTH_CACHE_MS = 5000;
const HEALTH_PING_TIMEOUT_MS = 5000;

type BackendHealth = NonNullable<HealthReport['backend']>;

export interface StdioHandler extends TransportHandler {
  /** For /health: the stdio server answers a ping (cached for 5 s). */
  backendHealth(): Promise<BackendHealth>;
}

export async function createStdioHandler(
  backend: StdioBackend,
  options: StdioHandlerOptions,
): Promise<StdioHandler> {
  const { config, logger } = options;
  const log = logger.child({ component: 'stdio-bridge' });
  // The upstream and the multiplexer refer to each other; the callbacks run only after both exist.
  const upstream: StdioUpstream = new StdioUpstream({
    connect: () => backend.connect(),
    logger: log,
    onMessage: (message, line) => mux.onUpstreamMessage(message, line),
    onReattached: () => {
      mux.reattached();
      eraProcess?.mainReattached();
    },
    onFailed: (reason) => mux.upstreamFailed(reason),
    ...options.reattach,
  });
  const mux: Multiplexer = new Multiplexer({
    send: (message) => upstream.send(message),
    policies: options.policies,
    // The same bound as for HTTP backends (`upstream_timeout`); progress notifications restart it.
    requestTimeoutMs: options.upstreamTimeoutMs,
    logger: log,
  });
  // A dual-era server's 2026-07-28 clients are served by a second process, when one can start.
  const startProcess = backend.startProcess?.bind(backend);
  const eraProcess: EraProcess | undefined = startProcess
    ? new EraProcess({
        start: startProcess,
        policies: options.policies,
        requestTimeoutMs: options.upstreamTimeoutMs,
        logger: log,
        ...(options.reattach ? { reattach: options.reattach } : {}),
      })
    : undefined;
  try {
    await upstream.start();
  } catch (err) {
    throw runtimeError(`Could not attach to the stdio MCP server: ${errorMessage(err)}`, { cause: err });
  }

  const core = new ClientSessions({
    mux,
    store: options.sessions,
    policies: options.policies,
    serverName: config.name,
    sessionTtlMs: options.sessionTtlMs,
    keepAliveMs: options.keepAliveMs,
    logger: log,
    ...(options.tracePropagation ? { tracePropagation: options.tracePropagation } : {}),
  });
  const mode = clientTransport(config);
  const streamable = new StreamableEndpoint(
    core,
    config.stateless === true,
    new StdioDownAdapter(core, options.inputBroker, eraProcess),
  );
  const legacy = new SseTransportEndpoint(core, config.endpoint_prefix);
  const legacyMessages = messagesPath(config.endpoint_prefix);
  let health: { at: number; result: Promise<BackendHealth> } | undefined;
  const probe = async (): Promise<BackendHealth> => {
    const checked_at = new Date().toISOString();
    if (mux.downReason !== undefined) return { reachable: false, error: mux.downReason, checked_at };
    const outcome = await mux.ping(HEALTH_PING_TIMEOUT_MS);
    return 'ms' in outcome
      ? { reachable: true, latency_ms: outcome.ms, checked_at }
      : { reachable: false, error: outcome.error, checked_at };
  };

  return {
    async handle(request: EdgeRequest): Promise<void> {
      const path = pathOf(request.req.url);
      if (mode === 'streamable-http') {
        if (path === STREAMABLE_HTTP_PATH) return streamable.handle(request);
      } else if (path === SSE_PATH) {
        return legacy.openStream(request);
      } else if (path === '/messages' || path === legacyMessages) {
        // The prefix is for clients behind a path-stripping ingress; both forms reach us.
        return legacy.postMessage(request);
      }
      const where = clientPath(config);
      throw reject(404, RPC.invalidRequest, `Not found: ${path} (this MCP server is served at ${where})`);
    },
    backendHealth(): Promise<BackendHealth> {
      if (!health || Date.now() - health.at > HEALTH_CACHE_MS) health = { at: Date.now(), result: probe() };
      return health.result;
    },
    async close(): Promise<void> {
      await core.close();
      await Promise.all([upstream.close(), eraProcess?.close()]);
    },
  };
}
