/**
 * The era bridge for HTTP backends: a 2026-07-28 request (stateless, `MCP-Protocol-Version:
 * 2026-07-28`) to a streamable-HTTP server that speaks 2025-11-25. Moat runs the request on the
 * caller's backend session (one per principal, eras/down/backend-sessions.ts), answers what 2026
 * removed or added itself (`server/discover`, `ping`, `logging/setLevel`, `subscriptions/listen`)
 * and returns the server's answers in 2026 shape. Client policies see the request as the client
 * sent it; response policies see the server's answer before it is reshaped.
 */
import type { EdgeRequest } from '../../types.js';
import { reject } from '../../pipeline/errors.js';
import { readMessage } from '../../pipeline/message.js';
import { applyClientPolicies } from '../../pipeline/client-policies.js';
import { messageContext, touchSession, withStore, type ForwarderContext } from '../context.js';
import { messagesOf, screenedMessages } from '../backend-messages.js';
import { HttpListenHub, type ListenBackend } from './down-listen.js';
import {
  discard,
  headerValue,
  upstreamHeaders,
  upstreamUrl,
  type UpstreamResponse,
} from '../upstream-client.js';
import { upstreamTimeoutMessage, UpstreamTimeout } from '../../pipeline/upstream-timeout.js';
import { BackendEras, discoverShowsStateless, eraOfMessage, protocolVersionOf } from '../../eras/decision.js';
import { discoverProbe, LATEST_SESSION_REVISION, STATELESS_REVISION } from '../../../mcp/revisions.js';
import {
  BackendSessions,
  bridgeSessionId,
  type BackendSession,
  type BackendSessionOpener,
} from '../../eras/down/backend-sessions.js';
import {
  clientCapabilitiesOf,
  isDroppedNotification,
  sessionEraInitialize,
  logPasses,
  LOG_LEVELS,
  requestedLogLevel,
  toSessionEraRequest,
  toStatelessResponse,
} from '../../eras/down/translate.js';
import { asInputRequest, QueuedCall } from '../../eras/down/seam.js';
import { localAnswer } from '../../eras/down/local.js';
import { checkEnvelope } from '../../eras/down/envelope.js';
import { errorMessage } from '../../../util/errors.js';
import {
  isRequest,
  isResponse,
  RPC,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../mcp/jsonrpc.js';
import { runServerPolicies, type MessageContext } from '../../../mcp/policy.js';
import type { Identity } from '../../../mcp/identity.js';
import { acceptsOf, PostSink } from '../../pipeline/answer-sink.js';

/** Listen streams share notifications per principal and backend session (a stateless server's is ''). */
function listenKey(identity: Identity, backendSessionId: string): string {
  return `${bridgeSessionId(identity)} ${backendSessionId}`;
}

/** The backend forgot the session (404): open a new one and send again. */
class SessionGone extends Error {}

export class HttpDownAdapter {
  /** What the backend speaks (eras/decision.ts); shared with the reverse direction in front of it. */
  readonly eras: BackendEras<EdgeRequest>;
  readonly sessions: BackendSessions;
  readonly #listens: HttpListenHub;
  #nextId = 1;

  constructor(private readonly fc: ForwarderContext) {
    this.sessions = new BackendSessions(fc.options.sessions);
    this.#listens = new HttpListenHub(fc.options.logger, fc.options.keepAliveMs);
    this.eras = new BackendEras((request) => this.#detect(request));
  }

  /** True when the era decision bridges this request (a 2026-07-28 POST to a backend that cannot speak it). */
  async bridges(request: EdgeRequest): Promise<boolean> {
    if (request.req.method !== 'POST') return false;
    if (eraOfMessage(request.req, await readMessage(request)) !== 'stateless') return false;
    return (await this.eras.statelessRoute(request)) === 'bridged';
  }

  async handle(request: EdgeRequest): Promise<void> {
    const received = await readMessage(request);
    checkEnvelope(received, protocolVersionOf(request.req));
    const ctx = messageContext(this.fc, request, undefined);
    const { message } = await applyClientPolicies(this.fc.options.policies, received, ctx, request);
    if (!isRequest(message)) {
      if ('method' in message && !isDroppedNotification(message.method)) {
        this.fc.options.logger.debug({ method: message.method }, 'notification of a bridged client dropped');
      }
      if (isResponse(message)) {
        throw reject(400, RPC.invalidRequest, 'MCP 2026-07-28 clients send no JSON-RPC responses');
      }
      request.res.writeHead(202).end();
      return;
    }
    const accepts = acceptsOf(request);
    if (!accepts.json && !accepts.sse) {
      throw reject(406, RPC.invalidRequest, 'Accept must include application/json or text/event-stream');
    }
    if (message.method === 'subscriptions/listen') {
      const session = await this.#session(request);
      const sessionId = session.backendSessionId;
      await this.#listens.serve(request, message, session, this.#listenBackend(request, sessionId));
      return;
    }
    const sink = new PostSink(request, accepts, this.fc.options.keepAliveMs);
    const answer = await this.#answer(request, message, ctx, sink);
    sink.respond(answer.response, answer.httpStatus);
    await sink.finished;
  }

  /** The principal's backend session as the listen hub uses it: its requests and its GET stream. */
  #listenBackend(request: EdgeRequest, sessionId: string): ListenBackend {
    return {
      key: listenKey(request.identity, sessionId),
      touch: () => touchSession(this.fc, bridgeSessionId(request.identity)),
      send: async (sent) => void (await this.#request(request, sessionId, sent)),
      stream: (signal) =>
        this.fc.client.send({
          url: upstreamUrl(this.fc.backend, request.req.url ?? '/'),
          method: 'GET',
          headers: {
            accept: 'text/event-stream',
            ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
            'mcp-protocol-version': LATEST_SESSION_REVISION,
          },
          identity: request.identity,
          signal,
        }),
    };
  }

  async #answer(
    request: EdgeRequest,
    message: JsonRpcRequest,
    ctx: MessageContext,
    sink: PostSink,
  ): Promise<{ response: JsonRpcResponse; httpStatus?: number }> {
    const broker = this.fc.options.inputBroker;
    const local = await localAnswer(
      message,
      request.identity,
      broker,
      async () => (await this.#session(request)).init,
    );
    if (local) return { response: local };
    const session = await this.#session(request);
    const call = this.#start(request, message, ctx, session, sink);
    request.res.once('close', () => {
      if (!request.res.writableFinished && !call.takenOver) call.cancel('the client closed the request');
    });
    const response = await call.settle(broker);
    return { response, ...(call.httpStatus ? { httpStatus: call.httpStatus } : {}) };
  }

  #session(request: EdgeRequest): Promise<BackendSession> {
    return withStore(this.fc, () =>
      this.sessions.get(request.identity, this.#opener(request, request.identity)),
    );
  }

  /** Runs one bridged request on the backend session; its events feed the returned call. */
  #start(
    request: EdgeRequest,
    message: JsonRpcRequest,
    ctx: MessageContext,
    session: BackendSession,
    sink: PostSink,
  ): HttpBridgedCall {
    const upstreamId = `moat-bridge-${this.#nextId++}`;
    const legacy = { ...toSessionEraRequest(message), id: upstreamId };
    // The session the request runs on: a new one when the server forgot the first (404).
    let current = session;
    const call = new HttpBridgedCall(message, request.identity, {
      answer: (body) => this.#send(request, current.backendSessionId, body),
      cancelled: (reason) =>
        this.#send(request, current.backendSessionId, {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: upstreamId, reason },
        }),
    });
    const timeoutMs = this.fc.options.upstreamTimeoutMs;
    const timer = setTimeout(() => call.abort(new UpstreamTimeout(timeoutMs)), timeoutMs);
    const level = requestedLogLevel(message);
    let release = () => {};
    const run = async () => {
      if (level) await this.#applyLogLevel(request, current, level);
      // What the server asks during the call may come on the session's GET stream instead.
      const hold = (session: BackendSession) =>
        this.#listens.hold(this.#listenBackend(request, session.backendSessionId), (received) =>
          this.#onServerRequest(call, request, session, received),
        );
      release = await hold(current);
      let upstream: UpstreamResponse;
      try {
        upstream = await this.#post(request, current.backendSessionId, legacy, call.signal);
      } catch (err) {
        if (!(err instanceof SessionGone)) throw err;
        release();
        await this.sessions.forget(request.identity, current.backendSessionId);
        current = await this.#session(request);
        if (level) await this.#applyLogLevel(request, current, level);
        release = await hold(current);
        upstream = await this.#post(request, current.backendSessionId, legacy, call.signal);
      }
      const answerServer = (answer: JsonRpcResponse) =>
        void this.#send(request, current.backendSessionId, answer);
      const policies = this.fc.options.policies;
      for await (const received of screenedMessages(
        messagesOf(upstream, message.id),
        policies,
        ctx,
        answerServer,
      )) {
        if (isResponse(received)) {
          if (received.id !== upstreamId && received.id !== null) continue;
          const final = await this.#finalAnswer({ ...received, id: message.id }, message, ctx, current);
          call.events.push({ kind: 'final', response: final });
          return;
        }
        if (isRequest(received)) {
          this.#onServerRequest(call, request, current, received);
        } else if (received.method === 'notifications/message') {
          if (level && logPasses(received.params?.level, level)) sink.related(received);
        } else if (received.method === 'notifications/progress') {
          sink.related(received);
        } else {
          this.#listens.publish(listenKey(request.identity, current.backendSessionId), received);
        }
      }
      throw new Error('the MCP backend ended the stream without an answer');
    };
    run()
      .catch((err: unknown) => {
        const timedOut = err instanceof UpstreamTimeout || call.signal.reason instanceof UpstreamTimeout;
        call.fail(
          timedOut
            ? { code: RPC.serverError, message: upstreamTimeoutMessage(timeoutMs) }
            : { code: RPC.serverError, message: `The MCP backend failed: ${errorMessage(err)}` },
          timedOut ? 504 : 502,
        );
      })
      .finally(() => {
        clearTimeout(timer);
        release();
      });
    return call;
  }

  #onServerRequest(
    call: HttpBridgedCall,
    request: EdgeRequest,
    session: BackendSession,
    received: JsonRpcRequest,
  ) {
    if (received.method === 'ping') {
      void this.#send(request, session.backendSessionId, { jsonrpc: '2.0', id: received.id, result: {} });
      return;
    }
    const input = asInputRequest(received);
    if (input) {
      call.events.push({ kind: 'input', input });
      return;
    }
    void this.#send(request, session.backendSessionId, {
      jsonrpc: '2.0',
      id: received.id,
      error: {
        code: RPC.methodNotFound,
        message: `Moat cannot carry ${received.method} to a 2026-07-28 client`,
      },
    });
  }

  /** Response policies on the server's answer (with the client's request), then the 2026 shape. */
  async #finalAnswer(
    response: JsonRpcResponse,
    message: JsonRpcRequest,
    ctx: MessageContext,
    session: BackendSession,
  ): Promise<JsonRpcResponse> {
    const checked =
      this.fc.options.policies.length > 0
        ? await runServerPolicies(this.fc.options.policies, response, message, ctx)
        : response;
    return toStatelessResponse(message.method, checked, session.init.serverInfo);
  }

  /**
   * `_meta` logLevel → `logging/setLevel` on the backend session, when it is more verbose than
   * what the session has (each request still gets only messages at or above its own level).
   */
  async #applyLogLevel(request: EdgeRequest, session: BackendSession, level: string): Promise<void> {
    const capabilities = session.init.capabilities;
    if (typeof capabilities !== 'object' || capabilities === null || !('logging' in capabilities)) return;
    if (session.logLevel && LOG_LEVELS.indexOf(session.logLevel) <= LOG_LEVELS.indexOf(level)) return;
    const setLevel = { jsonrpc: '2.0' as const, id: 0, method: 'logging/setLevel', params: { level } };
    await this.#request(request, session.backendSessionId, setLevel);
    await withStore(this.fc, () => this.sessions.setLogLevel(request.identity, session, level));
  }

  /** A request of Moat's own on a backend session; resolves with the server's answer. */
  async #request(
    request: EdgeRequest,
    sessionId: string,
    message: JsonRpcRequest,
  ): Promise<JsonRpcResponse | undefined> {
    const sent = { ...message, id: `moat-bridge-${this.#nextId++}` };
    const signal = AbortSignal.timeout(this.fc.options.upstreamTimeoutMs);
    const upstream = await this.#post(request, sessionId, sent, signal);
    for await (const received of messagesOf(upstream, sent.id)) {
      if (isResponse(received) && (received.id === sent.id || received.id === null)) return received;
    }
    return undefined;
  }

  /** Sends a message without an answer to wait for (a response, a notification); failures are logged. */
  async #send(request: EdgeRequest, sessionId: string, message: JsonRpcMessage): Promise<void> {
    try {
      const upstream = await this.#post(
        request,
        sessionId,
        message,
        AbortSignal.timeout(this.fc.options.upstreamTimeoutMs),
      );
      discard(upstream.body);
    } catch (err) {
      this.fc.options.logger.warn({ err: errorMessage(err) }, 'could not send a message to the MCP backend');
    }
  }

  /** One POST to the backend; 404 on a session → SessionGone. */
  async #post(
    request: EdgeRequest,
    sessionId: string | undefined,
    message: JsonRpcMessage,
    signal: AbortSignal,
    protocolVersion = LATEST_SESSION_REVISION,
    extra: Record<string, string> = {},
  ): Promise<UpstreamResponse> {
    const headers = upstreamHeaders(request.req.headers, {
      remote: this.fc.backend.remote,
      clientAddress: request.clientAddress,
      externalBaseUrl: request.externalBaseUrl,
    });
    delete headers['mcp-method'];
    delete headers['mcp-name'];
    delete headers['last-event-id'];
    headers['content-type'] = 'application/json';
    headers.accept = 'application/json, text/event-stream';
    headers['mcp-protocol-version'] = protocolVersion;
    // '' is the session of a stateless server: no header.
    if (sessionId) headers['mcp-session-id'] = sessionId;
    Object.assign(headers, extra);
    const upstream = await this.fc.client.send({
      url: upstreamUrl(this.fc.backend, request.req.url ?? '/'),
      method: 'POST',
      headers,
      body: Buffer.from(JSON.stringify(message)),
      identity: request.identity,
      signal,
    });
    if (upstream.statusCode === 404 && sessionId) {
      discard(upstream.body);
      throw new SessionGone();
    }
    return upstream;
  }

  /** Opens and ends backend sessions for one principal, on this request's path. */
  #opener(request: EdgeRequest, identity: Identity): BackendSessionOpener {
    const scoped = { ...request, identity };
    return {
      open: () => this.#openSession(scoped),
      close: async (_identity, backendSessionId) => {
        if (!backendSessionId) return;
        const upstream = await this.fc.client.send({
          url: upstreamUrl(this.fc.backend, request.req.url ?? '/'),
          method: 'DELETE',
          headers: { 'mcp-session-id': backendSessionId, 'mcp-protocol-version': LATEST_SESSION_REVISION },
          identity,
          signal: AbortSignal.timeout(this.fc.options.upstreamTimeoutMs),
        });
        discard(upstream.body);
      },
    };
  }

  /**
   * Initializes a backend session, announcing the client capabilities Moat can carry (the
   * broker's input kinds; none without one), and sends `notifications/initialized`.
   */
  async #openSession(request: EdgeRequest): Promise<BackendSession> {
    const init = sessionEraInitialize(
      `moat-bridge-${this.#nextId++}`,
      this.fc.options.inputBroker?.capabilities ?? {},
    );
    const signal = AbortSignal.timeout(this.fc.options.upstreamTimeoutMs);
    const upstream = await this.#post(request, undefined, init, signal);
    const backendSessionId = headerValue(upstream.headers, 'mcp-session-id');
    let answer: JsonRpcResponse | undefined;
    for await (const received of messagesOf(upstream, init.id)) {
      if (isResponse(received)) {
        answer = received;
        break;
      }
    }
    const failed = (why: string) =>
      reject(502, RPC.serverError, `The MCP backend could not start a session for this client: ${why}`);
    if (answer?.error) {
      // Upgraded in place to 2026-07-28, perhaps: the next request asks its era again.
      this.eras.forgetStateless();
      throw failed(answer.error.message);
    }
    if (typeof answer?.result !== 'object' || answer.result === null) throw failed('no initialize result');
    // A stateless server mints no session: its requests then go without one ('').
    await this.#send(request, backendSessionId ?? '', {
      jsonrpc: '2.0',
      method: 'notifications/initialized',
    });
    return { backendSessionId: backendSessionId ?? '', init: answer.result as Record<string, unknown> };
  }

  /** Does the backend answer `server/discover` with 2026-07-28 among its versions? */
  async #detect(request: EdgeRequest): Promise<boolean> {
    const probe = discoverProbe(`moat-bridge-${this.#nextId++}`);
    const upstream = await this.#post(
      request,
      undefined,
      probe,
      AbortSignal.timeout(this.fc.options.upstreamTimeoutMs),
      STATELESS_REVISION,
      { 'mcp-method': probe.method },
    );
    if (upstream.statusCode >= 500) {
      discard(upstream.body);
      throw reject(502, RPC.serverError, `The MCP backend failed (HTTP ${upstream.statusCode})`);
    }
    if (upstream.statusCode >= 300) {
      discard(upstream.body);
      return false;
    }
    for await (const received of messagesOf(upstream, probe.id)) {
      if (isResponse(received)) return discoverShowsStateless(received);
    }
    return false;
  }
}

/** A bridged request running on the backend: how to answer or cancel it there. */
class HttpBridgedCall extends QueuedCall {
  readonly #controller = new AbortController();

  constructor(
    request: JsonRpcRequest,
    identity: Identity,
    private readonly backend: {
      answer(message: JsonRpcResponse): Promise<void>;
      cancelled(reason: string): Promise<void>;
    },
  ) {
    super(request, identity, clientCapabilitiesOf(request));
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  answer(id: JsonRpcId, answer: { result: Record<string, unknown> } | { error: JsonRpcError }): void {
    void this.backend.answer({ jsonrpc: '2.0', id, ...answer });
  }

  cancel(reason: string): void {
    if (this.events.ended) return;
    void this.backend.cancelled(reason);
    this.fail({ code: RPC.serverError, message: `Request cancelled: ${reason}` }, 499);
    this.#controller.abort(new Error(reason));
  }

  /** Ends the backend exchange (the upstream timeout). */
  abort(reason: Error): void {
    this.#controller.abort(reason);
  }
}
