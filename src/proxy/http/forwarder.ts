/**
 * The HTTP forwarder: serves a streamable-HTTP or legacy-SSE MCP server (in a container, or a
 * remote URL) through the edge. The backend's session IDs never reach the client: the client gets
 * a random ID mapped to the backend's in the session store, so any replica sharing the store can
 * serve the session. Requests and non-stream answers are always checked (strict JSON-RPC, whole and
 * valid answers); with no policy configured nothing is rewritten and SSE streams pass unparsed.
 */
import { randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import type { HttpBackend, TransportOptions } from '../types.js';
import { rpcErrorBody, sessionNotFound } from '../pipeline/errors.js';
import { applyClientPolicies } from '../pipeline/client-policies.js';
import { messageIn } from '../pipeline/message.js';
import { mirrorHeaders } from '../edge/protocol.js';
import type { BackendEras } from '../eras/decision.js';
import { eraOfHeaders } from '../eras/decision.js';
import type { EdgeRequest, SessionRecord, TransportHandler } from '../types.js';
import type { HealthReport } from '../edge/server.js';
import {
  answerBackend,
  endSession,
  loadSession,
  messageContext,
  withStore,
  touchSession,
  type ForwarderContext,
} from './context.js';
import { SseTransportForwarder } from './sse-transport-relay.js';
import { HttpDownAdapter } from './eras/down.js';
import { PendingRequests, setsEventId } from './pending.js';
import {
  mayHoldList,
  policyRewriter,
  relayAnswer,
  relayJsonStream,
  relaySse,
  type ServerSide,
} from './relay.js';
import { answerLabel } from '../pipeline/media-type.js';
import { formatEvent } from '../../mcp/sse.js';
import { SseWriter } from '../pipeline/sse.js';
import { deadlineFailure, startDeadline, timeoutRejection, type UpstreamDeadline } from './deadline.js';
import { UpstreamTimeout } from '../pipeline/upstream-timeout.js';
import {
  clientHeaders,
  discard,
  headerValue,
  upstreamHeaders,
  upstreamUrl,
  UpstreamClient,
  wholeBody,
  type UpstreamResponse,
} from './upstream-client.js';
import type { UpstreamAuth } from '../../auth/outbound/types.js';
import {
  isRequest,
  isResponse,
  tryParseJsonRpc,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
} from '../../mcp/jsonrpc.js';
import { inspectsResponses, needsResponse, type MessagePolicy } from '../../mcp/policy.js';
import { ownerFields } from '../sessions/binding.js';

export interface HttpForwarderOptions extends TransportOptions {
  upstreamAuth?: UpstreamAuth;
}

export interface HttpForwarder extends TransportHandler {
  backendHealth(): Promise<NonNullable<HealthReport['backend']>>;
  /**
   * The backend's eras as learned so far (eras/decision.ts), for the reverse direction in front
   * of it; absent for legacy-SSE backends and `--stateless` workloads (no era adapter there).
   */
  eras?: BackendEras<EdgeRequest>;
}

/**
 * The backend refused a 2025-era `initialize` (a JSON-RPC error answer): nothing went to the
 * client yet, so the reverse direction may serve the session itself (http/eras/up.ts),
 * or relay `answer` as the backend sent it.
 */
export class SessionsRefused extends Error {
  constructor(
    /** The `initialize` as the client policies approved it. */
    readonly approved: JsonRpcRequest,
    readonly answer: UpstreamResponse,
  ) {
    super('the MCP backend refused a 2025-era initialize');
  }
}

const HEALTH_CACHE_MS = 5000;
const SESSION_METADATA = { transport: 'streamable-http' };

export function createHttpForwarder(backend: HttpBackend, options: HttpForwarderOptions): HttpForwarder {
  const fc: ForwarderContext = {
    backend,
    options,
    client: new UpstreamClient(options.upstreamAuth),
    pending: new PendingRequests(),
    inspectsResponses: inspectsResponses(options.policies),
    sessionEra: sessionEraPolicies(options.policies),
  };
  const legacy = backend.transport === 'sse' ? new SseTransportForwarder(fc) : undefined;
  // 2026-07-28 clients of a 2025-era streamable-HTTP server are bridged (eras/down.ts).
  const bridge = legacy ? undefined : new HttpDownAdapter(fc);
  if (bridge && options.config.stateless !== true) fc.eras = bridge.eras;
  let health: { at: number; result: Promise<NonNullable<HealthReport['backend']>> } | undefined;

  return {
    handle: (request) => (legacy ? legacy.handle(request) : forwardStreamable(fc, request, bridge)),
    ...(fc.eras ? { eras: fc.eras } : {}),
    close: () => fc.client.close(),
    backendHealth: () => {
      if (!health || Date.now() - health.at > HEALTH_CACHE_MS) {
        health = { at: Date.now(), result: fc.client.probe(backend.url) };
      }
      return health.result;
    },
  };
}

function sessionEraPolicies(all: readonly MessagePolicy[]): ForwarderContext['sessionEra'] {
  const policies = all.filter((p) => p.statelessOnly !== true);
  return { policies, inspectsResponses: inspectsResponses(policies) };
}

/** A 2025-era request skips the policies that only 2026-07-28 requests need. */
function policiesFor(fc: ForwarderContext, stateless: boolean): ForwarderContext['sessionEra'] {
  return stateless
    ? { policies: fc.options.policies, inspectsResponses: fc.inspectsResponses }
    : fc.sessionEra;
}

/** Parses the message and runs the client policies; returns what to send upstream. */
async function applyPolicies(
  fc: ForwarderContext,
  policies: readonly MessagePolicy[],
  request: EdgeRequest,
  sessionId: string | undefined,
): Promise<{ message: JsonRpcMessage; body: Buffer }> {
  const original = await request.readBody();
  const received = messageIn(request, original);
  const ctx = messageContext(fc, request, sessionId);
  const { message, rewritten } = await applyClientPolicies(policies, received, ctx, request);
  return { message, body: rewritten ? Buffer.from(JSON.stringify(message)) : original };
}

async function forwardStreamable(
  fc: ForwarderContext,
  request: EdgeRequest,
  bridge: HttpDownAdapter | undefined,
): Promise<void> {
  const { req } = request;
  const era = eraOfHeaders(req);
  if (bridge && era !== 'session' && (await bridge.bridges(request))) return bridge.handle(request);
  const stateless = fc.options.config.stateless === true || era === 'stateless';
  const method = req.method ?? 'GET';
  const { policies } = policiesFor(fc, stateless);

  let session: SessionRecord | undefined;
  const clientSessionId = stateless ? undefined : headerValue(req.headers, 'mcp-session-id');
  if (clientSessionId !== undefined) {
    session = await loadSession(fc, clientSessionId, request.identity);
    if (!session) {
      fc.pending.forget(clientSessionId);
      throw sessionNotFound();
    }
  }

  let body: Buffer | undefined;
  let message: JsonRpcMessage | undefined;
  if (method === 'POST') {
    // Every POST is checked as one JSON-RPC message (messageIn), policies or not.
    if (policies.length > 0) ({ message, body } = await applyPolicies(fc, policies, request, session?.id));
    else {
      body = await request.readBody();
      message = messageIn(request, body);
    }
  }
  const sentRequest: JsonRpcRequest | undefined = message && isRequest(message) ? message : undefined;

  const headers = upstreamHeaders(req.headers, {
    remote: fc.backend.remote,
    clientAddress: request.clientAddress,
    externalBaseUrl: request.externalBaseUrl,
  });
  if (message) mirrorHeaders(headers, message);
  if (session?.backendSessionId !== undefined) headers['mcp-session-id'] = session.backendSessionId;
  if (stateless) delete headers['last-event-id'];
  if (fc.options.tracePropagation && body) {
    const traced = fc.options.tracePropagation.outgoing(request.annotations, req.headers, message);
    Object.assign(headers, traced.headers);
    if (traced.message) body = Buffer.from(JSON.stringify(traced.message));
  }

  const rpcId = message && 'id' in message ? message.id : null;
  const outgoing = { method, headers, session, sentRequest, rpcId, stateless, body };
  // The deadline inline (not withDeadline): one async step and closure fewer per request.
  const deadline = startDeadline(fc.options.upstreamTimeoutMs, request.res);
  try {
    await exchange(fc, request, deadline, outgoing);
  } catch (err) {
    throw deadlineFailure(err, rpcId);
  } finally {
    deadline.stop();
  }
}

interface Outgoing {
  method: string;
  headers: Record<string, string>;
  session: SessionRecord | undefined;
  sentRequest: JsonRpcRequest | undefined;
  rpcId: JsonRpcId | null;
  stateless: boolean;
  body: Buffer | undefined;
}

/** One exchange with the backend, bounded by `deadline` until its answer is complete. */
async function exchange(
  fc: ForwarderContext,
  request: EdgeRequest,
  deadline: UpstreamDeadline,
  { method, headers, session, sentRequest, rpcId, stateless, body }: Outgoing,
): Promise<void> {
  const { req, res } = request;
  const upstream = await fc.client.send({
    url: upstreamUrl(fc.backend, req.url ?? '/'),
    method,
    headers,
    body,
    identity: request.identity,
    signal: deadline.signal,
  });
  if (fc.eras && !stateless && sentRequest?.method === 'initialize') {
    await refuseSessions(upstream, sentRequest);
  }

  // Map the backend's session to a client-facing one.
  const backendSessionId = stateless ? undefined : headerValue(upstream.headers, 'mcp-session-id');
  let exposedSessionId = session?.id;
  try {
    if (backendSessionId !== undefined && upstream.statusCode < 300) {
      if (!session) {
        const id = randomUUID();
        const now = Date.now();
        const record: SessionRecord = {
          id,
          backendSessionId,
          createdAt: now,
          lastAccess: now,
          metadata: SESSION_METADATA,
          ...ownerFields(request.identity),
        };
        await withStore(fc, (store) => store.create(record));
        exposedSessionId = id;
      } else if (backendSessionId !== session.backendSessionId) {
        const id = session.id;
        await withStore(fc, (store) => store.update(id, { backendSessionId }));
      }
    }
  } catch (err) {
    discard(upstream.body);
    throw err;
  }
  // The backend ended the session (404), or the client did (DELETE): forget it here too.
  if (session && (upstream.statusCode === 404 || (method === 'DELETE' && upstream.statusCode < 300))) {
    await endSession(fc, session.id);
    exposedSessionId = undefined;
  }

  const label = answerLabel(upstream.headers);
  const isSse = label === 'sse';
  const { policies, inspectsResponses: inspects } = policiesFor(fc, stateless);
  const side: ServerSide | undefined = inspects
    ? {
        policies,
        // The answer to a request this POST carried is parsed only when some policy needs it, or
        // when it may hold a list (a hostile server answering a list request on this stream).
        needed: (text) =>
          sentRequest === undefined || needsResponse(policies, sentRequest.method, text) || mayHoldList(text),
        ctx: messageContext(fc, request, session?.id),
        lookup: (id) =>
          sentRequest && sentRequest.id === id
            ? sentRequest
            : session
              ? fc.pending.take(session.id, id)
              : undefined,
        id: rpcId,
        answerServer: (answer) =>
          void answerBackend(fc, request, backendSessionId ?? session?.backendSessionId, answer),
      }
    : undefined;
  // An answer a policy must screen is read as JSON whatever its label (an event stream aside):
  // one the policies cannot read is refused, never passed on unchecked. (A DELETE's answer
  // carries no message a client reads.)
  const transforms =
    side !== undefined &&
    !isSse &&
    method !== 'DELETE' &&
    upstream.statusCode < 300 &&
    (upstream.whole === undefined || side.needed?.(upstream.whole) !== false);
  const json = label === 'json' || transforms;

  if (exposedSessionId !== undefined) request.annotations.sessionId = exposedSessionId;
  const sessionHeader: Record<string, string> =
    exposedSessionId !== undefined && backendSessionId !== undefined
      ? { 'mcp-session-id': exposedSessionId }
      : {};
  if (!isSse) {
    // An answer of known length is read whole and checked before any byte goes out (a broken
    // answer is a clean 502); one of unknown length may be JSON lines on a response left open,
    // relayed message by message.
    if (json && upstream.whole === undefined && upstream.headers['content-length'] === undefined)
      await relayJsonStream(upstream, res, rpcId, transforms ? side : undefined, sessionHeader);
    else await relayAnswer(upstream, res, rpcId, transforms ? side : undefined, sessionHeader, json);
    return;
  }
  // A stream the client opened (GET) may stay open for hours; a POST's stream carries its answer.
  if (method !== 'POST') deadline.stop();
  const outHeaders: OutgoingHttpHeaders = Object.assign(clientHeaders(upstream.headers, true), sessionHeader);
  outHeaders['x-accel-buffering'] = 'no';
  outHeaders['cache-control'] ??= 'no-cache';
  res.writeHead(upstream.statusCode, outHeaders);

  const touchedId = session?.id ?? exposedSessionId;
  const writer = new SseWriter(res, {
    keepAliveMs: fc.options.keepAliveMs,
    ...(touchedId ? { onKeepAlive: () => touchSession(fc, touchedId) } : {}),
  });
  // This POST's answer may yet come on a resumed stream only if this one gave the client an event
  // id: then its request is remembered for the response policies there (pending.ts).
  const remembers = side !== undefined && sentRequest !== undefined && session !== undefined;
  let resumable = false;
  const noteEventIds = (text: string | Buffer): void => {
    if (remembers && !resumable) resumable = setsEventId(text);
  };
  const rewrite = side && policyRewriter(side);
  try {
    // Ends the response itself when the stream ends (in the tick its last event is written).
    await relaySse(
      upstream,
      writer,
      rewrite &&
        ((event) => {
          noteEventIds(event.raw);
          return rewrite(event);
        }),
      side?.needed &&
        ((chunk) => {
          noteEventIds(chunk);
          return !side.needed?.(chunk);
        }),
    );
  } catch (err) {
    // The client went away or the backend broke the stream (the relay aborted the exchange);
    // both end this response.
    fc.options.logger.debug({ err: String(err) }, 'stream from the MCP backend ended early');
    if (err instanceof UpstreamTimeout && rpcId !== null && !writer.closed) {
      // An event the backend left half-way is closed first, so the error is an event of its own.
      const cut = writer.atEventBoundary ? '' : '\n\n';
      const error = formatEvent('message', rpcErrorBody(timeoutRejection(err, rpcId).rpcError, rpcId));
      await writer.write(cut + error);
    }
  } finally {
    if (resumable && sentRequest && session) fc.pending.add(session.id, sentRequest);
    writer.end();
  }
}

/**
 * The era decision's test of a 2025-era `initialize` (eras/decision.ts): a JSON-RPC error answer
 * (HTTP 200 or 4xx; a 2026-only server answers 400, -32022) is thrown as SessionsRefused before
 * any byte reaches the client, for the reverse direction to serve or relay. Runs for `initialize`
 * only (once per session), never for other requests.
 */
async function refuseSessions(upstream: UpstreamResponse, approved: JsonRpcRequest): Promise<void> {
  const status = upstream.statusCode;
  if (status >= 500 || status === 401 || status === 403 || (status >= 300 && status < 400)) return;
  if (!(headerValue(upstream.headers, 'content-type') ?? '').startsWith('application/json')) return;
  try {
    upstream.whole ??= await wholeBody(upstream);
  } catch {
    return; // a broken answer: the relay reports it
  }
  const answer = tryParseJsonRpc(upstream.whole.toString('utf8'));
  if (answer && isResponse(answer) && answer.error !== undefined) {
    throw new SessionsRefused(approved, upstream);
  }
}
