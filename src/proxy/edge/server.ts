/**
 * The HTTP edge: one node:http listener in front of a transport handler. Order per request:
 * health and extra routes (outside the chain) → origin → body size → protocol gates →
 * middlewares (authentication, audit, ... outermost first) → 2026-07-28 header check → handler.
 * Every refusal is an HTTP 4xx with a JSON-RPC error body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { errorMessage, isMoatError } from '../../util/errors.js';
import { ProxyRejection, reject, writeJsonRpcError, writeRejection } from '../pipeline/errors.js';
import { readMessage } from '../pipeline/message.js';
import { type EdgeMiddleware, type EdgeRequest, type TransportHandler } from '../types.js';
import {
  recordMessage,
  recordResponse,
  type ExchangeObserver,
  type ExchangeRecord,
  type ExchangeSummary,
} from '../../mcp/exchange.js';
import { tryParseJsonRpc } from '../../mcp/jsonrpc.js';
import { recordMember, type MemberResolver } from '../../mcp/members.js';
import type { ClientTransportKind } from '../../mcp/policy.js';
import { checkContentLength, drainRefusedBody, readBody } from './body.js';
import { answerClientError, answerConnect, checkHttpRules } from './http-rules.js';
import { meterBody } from './meter.js';
import { allowOrigin, answerPreflight, isPreflight } from './cors.js';
import { externalBaseUrl } from './external-url.js';
import { localIdentity } from './identity.js';
import { originAllowed, originAllowlist } from './origin.js';
import { checkMirroredHeaders, checkProtocolVersion, checkStatelessMethod } from './protocol.js';
import { isStatelessRequest } from '../eras/decision.js';
import { RPC } from '../../mcp/jsonrpc.js';

/** A handler outside the middleware chain (e.g. OAuth protected-resource metadata). */
export interface EdgeRoute {
  /** Path this route serves, and everything below it (`/x` serves `/x` and `/x/...`). */
  prefix: string;
  handle(req: IncomingMessage, res: ServerResponse, externalBaseUrl: string): void | Promise<void>;
}

export interface HealthReport {
  /** `unhealthy` (HTTP 503): requests cannot be served, e.g. the session store is stuck. */
  status: 'healthy' | 'degraded' | 'unhealthy';
  transport: string;
  uptime_seconds: number;
  timestamp: string;
  backend?: { reachable: boolean; latency_ms?: number; error?: string; checked_at: string };
  session_store?: { ok: boolean; error?: string };
}

export interface EdgeOptions {
  host: string;
  port: number;
  allowedOrigins?: readonly string[];
  maxBodyBytes: number;
  readTimeoutMs: number;
  trustProxyHeaders: boolean;
  strictProtocolValidation: boolean;
  stateless: boolean;
  middlewares: readonly EdgeMiddleware[];
  /** Told about every exchange that reached the middlewares, once its answer has ended. */
  observers: readonly ExchangeObserver[];
  /** The client-facing transport, for observers. */
  transport: ClientTransportKind;
  routes: readonly EdgeRoute[];
  health(): Promise<HealthReport>;
  handler: TransportHandler;
  logger: Logger;
  /** The aggregate backend's member resolver (types.ts, BackendSpec): observers get `record.backend`. */
  memberOf?: MemberResolver;
}

export interface Edge {
  server: Server;
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  close(): Promise<void>;
}

/** The path of a request target, without the query (no URL parsing: it runs on every request). */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q === -1 ? raw : raw.slice(0, q);
}

function hostAndPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Whether `path` is `prefix` (no trailing slash) or below it. */
function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 0x2f);
}

/** How long close() waits, once every connection closed, for the exchanges still unwinding to report. */
const UNWIND_BOUND_MS = 2000;

/** The client closed the connection before its response was complete. */
function clientWentAway(res: ServerResponse): boolean {
  return !res.writableFinished && (res.closed || res.destroyed);
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  // What MCP clients send, checked without splitting or lower-casing a copy.
  if (value === 'application/json') return true;
  const essence = value.split(';')[0]?.trim().toLowerCase();
  return essence === 'application/json';
}

/**
 * The exchange record as observers get it: the session from the transport, or else from the
 * request; the message named even when nothing parsed it (no policy configured).
 */
function completeRecord(
  request: EdgeRequest,
  requestBody: Buffer | undefined,
  memberOf: MemberResolver | undefined,
): ExchangeRecord {
  const record = request.annotations;
  if (record.method === undefined && requestBody !== undefined && request.req.method === 'POST') {
    const message = tryParseJsonRpc(requestBody.toString('utf8'));
    if (message) recordMessage(record, message);
  }
  // Behind an aggregate endpoint: the member, unless a policy resolved it on the message it let out.
  if (memberOf !== undefined && record.backend === undefined) recordMember(record, requestBody, memberOf);
  if (record.sessionId === undefined) {
    const header = request.req.headers['mcp-session-id'];
    // The URL is parsed only without the header (legacy SSE clients name the session in the query).
    const id = typeof header === 'string' ? header : sessionIdInQuery(request.req.url);
    if (id) record.sessionId = id;
  }
  return record;
}

function sessionIdInQuery(url: string | undefined): string | null {
  const query = new URL(url ?? '/', 'http://x').searchParams;
  return query.get('sessionId') ?? query.get('session_id');
}

/**
 * An ended exchange as observers get it. Plain assignments, no spreads: it runs on every
 * observed request, on the proxy's one thread.
 */
function summarize(
  request: EdgeRequest,
  path: string,
  transport: ClientTransportKind,
  outcome: { status: number; started: number; responseBytes: number },
  requestBody: Buffer | undefined,
  memberOf: MemberResolver | undefined,
): ExchangeSummary {
  const { req } = request;
  const summary: ExchangeSummary = {
    httpMethod: req.method ?? 'GET',
    path,
    status: outcome.status,
    started: outcome.started,
    ended: Date.now(),
    identity: request.identity,
    clientAddress: request.clientAddress,
    transport,
    responseBytes: outcome.responseBytes,
    httpVersion: req.httpVersion,
    record: completeRecord(request, requestBody, memberOf),
  };
  const { headers } = req;
  if (headers['user-agent']) summary.userAgent = headers['user-agent'];
  if (requestBody) summary.requestBody = requestBody;
  // The client's W3C trace context and protocol version, for telemetry.
  if (typeof headers.traceparent === 'string') summary.traceparent = headers.traceparent;
  if (typeof headers.tracestate === 'string') summary.tracestate = headers.tracestate;
  const protocolVersion = headers['mcp-protocol-version'];
  if (typeof protocolVersion === 'string') summary.protocolVersion = protocolVersion;
  const clientPort = req.socket.remotePort;
  if (clientPort !== undefined) summary.clientPort = clientPort;
  return summary;
}

export function createEdge(options: EdgeOptions): Edge {
  const { logger, handler } = options;
  let allowlist: Set<string> | undefined;
  const routes = options.routes.map((r) => [r.prefix.replace(/\/+$/, ''), r] as const);
  /** The host in the external URL when the request's Host cannot be used (set again once bound). */
  let fallbackHost = hostAndPort(options.host, options.port);

  function refuse(req: IncomingMessage, res: ServerResponse, rejection: ProxyRejection): void {
    if (rejection.httpStatus === 413) drainRefusedBody(req, options.readTimeoutMs);
    logger.debug(
      {
        method: req.method,
        path: pathOf(req.url),
        status: rejection.httpStatus,
        code: rejection.rpcError.code,
      },
      `request refused: ${rejection.rpcError.message}`,
    );
    writeRejection(res, rejection);
  }

  async function serveHealth(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw reject(405, RPC.invalidRequest, 'Method not allowed: /health accepts GET', {
        headers: { allow: 'GET' },
      });
    }
    const report = await options.health();
    const body = JSON.stringify(report);
    res.writeHead(report.status === 'unhealthy' ? 503 : 200, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** The innermost step: the 2026-07-28 header check, then the transport handler. */
  async function dispatch(request: EdgeRequest): Promise<void> {
    try {
      if (request.req.method === 'POST' && isStatelessRequest(request.req)) {
        checkMirroredHeaders(request.req, await readMessage(request));
      }
      await handler.handle(request);
    } catch (err) {
      if (!(err instanceof ProxyRejection)) throw err;
      if (err.deniedBy !== undefined) request.annotations.deniedBy ??= err.deniedBy;
      recordResponse(request.annotations, { jsonrpc: '2.0', id: err.id, error: err.rpcError });
      refuse(request.req, request.res, err);
    }
  }

  function runChain(request: EdgeRequest, index: number): Promise<void> {
    const middleware = options.middlewares[index];
    if (!middleware) return dispatch(request);
    return middleware(request, () => runChain(request, index + 1));
  }

  /**
   * Serves one request; a refusal is thrown at once or rejects the returned promise. Not async:
   * the checks before the chain need no promise of their own (this is on every request's path).
   */
  function serve(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
    checkHttpRules(req);
    const path = pathOf(req.url);
    if (path === '/health') return serveHealth(req, res);
    const base = externalBaseUrl(req, options.trustProxyHeaders, fallbackHost);
    for (const [prefix, route] of routes) {
      if (underPrefix(path, prefix)) return route.handle(req, res, base);
    }
    if (path.startsWith('/.well-known/')) throw reject(404, RPC.invalidRequest, `Not found: ${path}`);

    const origin = req.headers.origin;
    if (!originAllowed(allowlist, origin)) {
      throw reject(403, RPC.invalidRequest, `Origin not allowed: ${origin ?? ''}`);
    }
    // An origin an allowlist names (not merely unchecked) may read responses from a browser.
    if (origin !== undefined && allowlist) {
      allowOrigin(res, origin);
      if (isPreflight(req)) return answerPreflight(res, options.stateless);
    }
    checkContentLength(req, options.maxBodyBytes);
    if (options.stateless || isStatelessRequest(req)) checkStatelessMethod(req);
    if (options.strictProtocolValidation) checkProtocolVersion(req);
    if (req.method === 'POST' && !isJsonContentType(req.headers['content-type'])) {
      throw reject(
        415,
        RPC.invalidRequest,
        'Unsupported Content-Type: MCP messages must be sent as application/json',
      );
    }

    let body: Promise<Buffer> | undefined;
    const request: EdgeRequest = {
      req,
      res,
      identity: localIdentity(),
      clientAddress: req.socket.remoteAddress ?? '',
      externalBaseUrl: base,
      readBody: () => (body ??= readBody(req, options.maxBodyBytes, options.readTimeoutMs)),
      annotations: {},
    };
    if (options.observers.length === 0) return runChain(request, 0);
    return observed(request, path, () => body);
  }

  /**
   * Serves an exchange with observers, and reports it once its response has closed. Callbacks,
   * not an async function: no promise waits for the close per request; the chain's promise
   * settles when the chain is done, and the report follows the response's 'close'.
   */
  function observed(
    request: EdgeRequest,
    path: string,
    body: () => Promise<Buffer> | undefined,
  ): Promise<void> {
    const { res } = request;
    const started = Date.now();
    const responseBytes = meterBody(res);
    unreported++;
    const finish = (status: number): void => {
      const outcome = { status, started, responseBytes: responseBytes() };
      const read = body();
      if (!read)
        return reportLast(summarize(request, path, options.transport, outcome, undefined, options.memberOf));
      read.then(
        (requestBody) =>
          reportLast(summarize(request, path, options.transport, outcome, requestBody, options.memberOf)),
        () => reportLast(summarize(request, path, options.transport, outcome, undefined, options.memberOf)),
      );
    };
    return runChain(request, 0).then(
      () => {
        // 'close' follows 'finish' or an abort; the response is dropped after it, so on() is enough.
        if (res.closed) finish(res.statusCode);
        else res.on('close', () => finish(res.statusCode));
      },
      (err: unknown) => {
        // A failure that escapes is answered with 500 by the caller, after this report's status.
        finish(res.headersSent ? res.statusCode : 500);
        throw err;
      },
    );
  }

  function report(summary: ExchangeSummary): void {
    for (const observer of options.observers) observer.onExchange(summary);
  }

  /**
   * Exchanges served with observers whose report is not out yet. An exchange the client (or the
   * proxy's close) cut off reports a few ticks after its connection closed, while it unwinds:
   * close() waits for those reports, so the observers (audit) are closed after their last line.
   */
  let unreported = 0;
  let onAllReported: (() => void) | undefined;
  function reportLast(summary: ExchangeSummary): void {
    try {
      report(summary);
    } finally {
      if (--unreported === 0) onAllReported?.();
    }
  }

  /** Answers a request whose serving failed: its refusal, or a 500 (or nothing, for a client gone). */
  function failed(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    if (err instanceof ProxyRejection) {
      refuse(req, res, err);
      return;
    }
    if (isMoatError(err)) {
      writeJsonRpcError(res, err.httpStatus, { code: RPC.serverError, message: err.message });
      return;
    }
    if (clientWentAway(res)) {
      // Normal: e.g. a client closing its GET stream before the backend sent the first event.
      logger.debug(
        { err: errorMessage(err), method: req.method, path: pathOf(req.url) },
        'client closed the connection before the response was complete',
      );
      res.destroy();
      return;
    }
    logger.error(
      { err: errorMessage(err), method: req.method, path: pathOf(req.url) },
      'proxy request failed',
    );
    if (res.headersSent) res.destroy();
    else writeJsonRpcError(res, 500, { code: RPC.internalError, message: 'Internal proxy error' });
  }

  const readTimeout = options.readTimeoutMs;
  const server = createServer(
    {
      // The edge checks Host itself, to answer with a JSON-RPC body (http-rules.ts).
      requireHostHeader: false,
      // --proxy-read-timeout bounds the header phase too; Node checks its timers this often.
      headersTimeout: readTimeout,
      // The edge's own body deadline (408 with a JSON-RPC body) fires first; streams stay open.
      requestTimeout: readTimeout + 1000,
      connectionsCheckingInterval: Math.min(1000, readTimeout),
      // Longer than clients keep idle connections (undici: 4 s), so a client never reuses a
      // socket the proxy is closing at that moment.
      keepAliveTimeout: Math.max(readTimeout, 5000),
    },
    (req, res) => {
      let served: void | Promise<void>;
      try {
        served = serve(req, res);
      } catch (err) {
        failed(req, res, err);
        return;
      }
      served?.catch((err: unknown) => failed(req, res, err));
    },
  );
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);

  return {
    server,
    listen: () =>
      new Promise<number>((resolve, rejectListen) => {
        server.once('error', rejectListen);
        server.listen(options.port, options.host, () => {
          server.off('error', rejectListen);
          const port = (server.address() as AddressInfo).port;
          fallbackHost = hostAndPort(options.host, port);
          allowlist = originAllowlist(options.allowedOrigins, options.host, port);
          if (!allowlist) {
            logger.warn(
              { host: options.host },
              'Origin validation is off: no --allowed-origins for a non-loopback bind (browsers on other sites can reach this proxy)',
            );
          }
          resolve(port);
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          if (unreported === 0) return resolve();
          onAllReported = resolve;
          // Bounded: an exchange still unwinding this long after its connection closed is stuck.
          setTimeout(resolve, UNWIND_BOUND_MS).unref();
        });
        server.closeIdleConnections();
        // Open streams (SSE) would keep close() waiting forever.
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }),
  };
}
