/**
 * The streamable-HTTP client side of the stdio bridge (`/mcp`):
 * - POST: one JSON-RPC message. A request is answered with JSON, or with an SSE stream as soon as
 *   the server sends something related to it first (progress, logs, sampling) and the client
 *   accepts SSE. Notifications and responses get 202.
 * - GET: the session's standalone SSE stream (list_changed, resources/updated, server requests
 *   that arrive outside a POST stream). Keep-alive comments; no resumption (Last-Event-ID ignored).
 * - DELETE: ends the session.
 * Sessions: minted on initialize, validated on every other request; `stateless` and 2026-07-28
 * requests get none (POST only; GET/DELETE → 405).
 */
import { reject } from '../../pipeline/errors.js';
import { readMessage } from '../../pipeline/message.js';
import { type EdgeRequest } from '../../types.js';
import type { ClientSessions } from './sessions.js';
import type { StdioDownAdapter } from '../eras/down.js';
import { MuxSession, RpcFailure } from '../session.js';
import { SseWriter, startEventStream } from '../../pipeline/sse.js';
import { eraOfHeaders, eraOfMessage, isStatelessRequest, protocolVersionOf } from '../../eras/decision.js';
import { checkEnvelope } from '../../eras/down/envelope.js';
import {
  isRequest,
  RPC,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../mcp/jsonrpc.js';
import { runServerPolicies } from '../../../mcp/policy.js';
import { acceptsOf, PostSink, type RequestSink } from '../../pipeline/answer-sink.js';

function sessionHeader(request: EdgeRequest): string | undefined {
  const value = request.req.headers['mcp-session-id'];
  return typeof value === 'string' ? value : undefined;
}

export class StreamableEndpoint {
  constructor(
    private readonly core: ClientSessions,
    private readonly stateless: boolean,
    /** Serves 2026-07-28 requests when the stdio server speaks an older revision. */
    private readonly bridge?: StdioDownAdapter,
  ) {}

  async handle(request: EdgeRequest): Promise<void> {
    const method = request.req.method ?? 'GET';
    const postOnly = this.stateless || isStatelessRequest(request.req);
    // The edge already refused GET/DELETE for stateless servers and 2026-07-28 requests.
    if (method === 'POST') return this.#post(request, postOnly);
    if (method === 'GET') return this.#get(request);
    if (method === 'DELETE') return this.#delete(request);
    throw reject(405, RPC.invalidRequest, `Method ${method} not allowed on /mcp`, {
      headers: { allow: 'GET, POST, DELETE' },
    });
  }

  async #post(request: EdgeRequest, postOnly: boolean): Promise<void> {
    const accepts = acceptsOf(request);
    if (!accepts.json && !accepts.sse) {
      throw reject(406, RPC.invalidRequest, 'Accept must include application/json or text/event-stream');
    }
    const message = await readMessage(request);
    const bridge = this.bridge;
    if (
      bridge &&
      eraOfHeaders(request.req) !== 'session' &&
      eraOfMessage(request.req, message) === 'stateless'
    ) {
      return this.#postStateless(request, message, accepts, bridge);
    }
    if (isRequest(message) && message.method === 'initialize') {
      return this.#initialize(request, message, accepts, postOnly);
    }
    const rpcId = 'id' in message ? message.id : null;
    const session = postOnly
      ? ephemeralSession(message)
      : await this.core.resolve(request.identity, sessionHeader(request), 'streamable-http', rpcId);
    if (session.ephemeral) this.core.mux.addSession(session);
    const ctx = this.core.context(request, 'streamable-http', session);
    try {
      const approved = await this.core.applyPolicies(request, message, ctx);
      if (!isRequest(approved)) {
        await this.core.dispatch(session, approved, noSink, ctx);
        request.res.writeHead(202).end();
        return;
      }
      // A stateless client closing its POST cancels the request (2026-07-28); a stateful one may
      // reconnect, so its request runs on and the answer is dropped.
      const onAbort = session.ephemeral
        ? () => this.core.end(session, 'the client closed the request')
        : undefined;
      const sink = new PostSink(request, accepts, this.core.o.keepAliveMs, {}, onAbort);
      await this.core.dispatch(session, approved, sink, ctx);
      await sink.finished;
    } finally {
      if (session.ephemeral) this.core.mux.endSession(session, 'the request ended');
    }
  }

  /**
   * A 2026-07-28 request (eras/decision.ts). Moat is the HTTP binding of a 2026 stdio server, or
   * bridges a session-era one: either way it first refuses what the binding refuses; then the
   * client policies; only then may the server be asked its era (its first message picks it).
   */
  async #postStateless(
    request: EdgeRequest,
    message: JsonRpcMessage,
    accepts: { json: boolean; sse: boolean },
    bridge: StdioDownAdapter,
  ): Promise<void> {
    checkEnvelope(message, protocolVersionOf(request.req));
    const ctx = this.core.context(request, 'streamable-http');
    const approved = await this.core.applyPolicies(request, message, ctx);
    const mux = await bridge.route();
    if (mux === 'bridged') return bridge.handle(request, approved, ctx);
    const session = ephemeralSession(approved);
    mux.addSession(session);
    try {
      if (!isRequest(approved)) {
        await this.core.dispatch(session, approved, noSink, ctx, mux);
        request.res.writeHead(202).end();
        return;
      }
      const onAbort = () => this.core.end(session, 'the client closed the request', mux);
      const sink = new PostSink(request, accepts, this.core.o.keepAliveMs, {}, onAbort);
      const sent = await bridge.native(request, approved);
      await this.core.dispatch(session, sent, bridge.nativeSink(request, approved, sink), ctx, mux);
      await sink.finished;
    } finally {
      mux.endSession(session, 'the request ended');
    }
  }

  async #initialize(
    request: EdgeRequest,
    message: JsonRpcRequest,
    accepts: { json: boolean; sse: boolean },
    postOnly: boolean,
  ): Promise<void> {
    const ctx = this.core.context(request, 'streamable-http');
    const approved = await this.core.applyPolicies(request, message, ctx);
    if (!isRequest(approved)) throw reject(400, RPC.invalidRequest, 'initialize must be a request');
    let response: JsonRpcResponse;
    let httpStatus = 200;
    try {
      response = { jsonrpc: '2.0', id: approved.id, result: await this.core.mux.initialize(approved) };
    } catch (err) {
      if (!(err instanceof RpcFailure)) throw err;
      response = { jsonrpc: '2.0', id: approved.id, error: err.error };
      httpStatus = err.httpStatus;
    }
    const headers: Record<string, string> = {};
    if (!response.error && !postOnly) {
      const result = response.result as { protocolVersion?: string };
      const capabilities = approved.params?.capabilities;
      const clientInfo = approved.params?.clientInfo;
      const session = await this.core.createSession(
        request.identity,
        'streamable-http',
        typeof capabilities === 'object' && capabilities !== null
          ? (capabilities as Record<string, unknown>)
          : {},
        result.protocolVersion,
      );
      if (typeof clientInfo === 'object' && clientInfo !== null) {
        session.clientInfo = clientInfo as Record<string, unknown>;
      }
      headers['mcp-session-id'] = session.id;
      ctx.sessionId = session.id;
      request.annotations.sessionId = session.id;
    }
    if (this.core.o.policies.length > 0) {
      response = await runServerPolicies(this.core.o.policies, response, approved, ctx);
    }
    new PostSink(request, accepts, 0, headers).respond(response, httpStatus);
  }

  async #get(request: EdgeRequest): Promise<void> {
    if (!acceptsOf(request).sse)
      throw reject(406, RPC.invalidRequest, 'Accept must include text/event-stream');
    const session = await this.core.resolve(
      request.identity,
      sessionHeader(request),
      'streamable-http',
      null,
    );
    if (session.channel) {
      throw reject(409, RPC.invalidRequest, 'This session already has an open stream; close it first');
    }
    await new Promise<void>((resolve) => {
      startEventStream(request.res);
      const stream = new SseWriter(request.res, {
        keepAliveMs: this.core.o.keepAliveMs,
        onClose: () => {
          if (session.channel === channel) session.channel = undefined;
          resolve();
        },
      });
      const channel = { send: (m: JsonRpcMessage) => stream.message(m), close: () => stream.end() };
      session.channel = channel;
    });
  }

  async #delete(request: EdgeRequest): Promise<void> {
    const session = await this.core.resolve(
      request.identity,
      sessionHeader(request),
      'streamable-http',
      null,
    );
    this.core.end(session, 'the client ended the session');
    request.res.writeHead(204).end();
  }
}

/** Session-less requests still need a routing identity for server messages during the request. */
function ephemeralSession(message: JsonRpcMessage): MuxSession {
  const session = new MuxSession('', 'streamable-http', true);
  // 2026-07-28 requests carry the client's capabilities in _meta; otherwise they are unknown.
  const meta = 'params' in message ? message.params?._meta : undefined;
  const capabilities =
    typeof meta === 'object' && meta !== null
      ? (meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities']
      : undefined;
  if (typeof capabilities === 'object' && capabilities !== null) {
    session.capabilities = capabilities as Record<string, unknown>;
  }
  return session;
}

const noSink: RequestSink = { related: () => false, respond: () => {} };
