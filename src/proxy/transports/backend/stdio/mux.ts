/**
 * The multiplexer between many client sessions and one stdio MCP server.
 *
 * - Client request ids are replaced by unique upstream ids (a counter, so no client session id ever
 *   reaches the server) and restored exactly (string or number) on the response.
 * - Progress tokens are replaced the same way, so `notifications/progress` reaches the request
 *   that asked for it even when two clients use the same token.
 * - The server is initialized once, by the proxy, with the first client's `initialize` params; the
 *   proxy sends `notifications/initialized` itself. Later sessions get the cached result with the
 *   protocol version they asked for when it is a known one not newer than the negotiated one.
 *   After a re-attach the same initialize is sent again first: the server may be a new process.
 *   The proxy declares `sampling` and `elicitation` to the server even when the first client did
 *   not (a later one may); each server request is then checked against the capabilities of the
 *   session it is attributed to. `roots` stays as the first client declared it: servers ask for
 *   roots right after initialize, when no client could be attributed.
 * - Server requests (sampling, elicitation, roots) and log notifications are attributed to the one
 *   session that has interactive requests in flight; when several do, they are refused (requests:
 *   JSON-RPC error back to the server) or dropped (notifications) rather than guessed. A bridged
 *   request held for its client's multi round-trip retry does not count while others work.
 * - `list_changed` goes to every session's standalone stream; `resources/updated` to subscribers;
 *   `resources/subscribe` is reference-counted so the server sees one subscription per URI.
 * - `logging/setLevel` is per session: the server gets the most verbose level any session asked
 *   for, and each session receives only log messages at or above its own level.
 * - The server's era is probed first, with `server/discover` (bounded): a 2025-era server is
 *   initialized as above. A 2026-07-28 server is never initialized (that would pin a dual-era
 *   server to its 2025 mode): 2026 requests pass through as sent, and 2025-era sessions are served
 *   in the other direction (eras/reverse's wire: `initialize` from discover, the `_meta` envelope
 *   on each request, `input_required` rounds as server→client requests, subscriptions on one
 *   `subscriptions/listen` of the proxy's own): that code is in modern-upstream.ts.
 */
import type { Logger } from 'pino';
import { upstreamTimeoutMessage } from '../http/deadline.js';
import { LOG_LEVELS } from '../../../eras/forward/translate.js';
import { discoverProbe, eraOfDiscoverAnswer, type BackendEra } from '../../../eras/probe.js';
import { hasModernEnvelope } from '../../../eras/forward/envelope.js';
import { initializeAnswer, negotiatedRevision } from '../../../eras/reverse/wire.js';
import { subscriptionIdOf } from './modern.js';
import { ModernUpstream } from './modern-upstream.js';
import { Subscribers } from './subscribers.js';
import { errorMessage } from '../../../../util/errors.js';
import {
  idKey,
  isRequest,
  isResponse,
  RPC,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../../mcp/jsonrpc.js';
import {
  inspectsServerMessages,
  needsResponse,
  runServerPolicies,
  screenServerMessage,
  type ClientTransportKind,
  type MessageContext,
  type MessagePolicy,
} from '../../../../mcp/policy.js';

/** Where the answer to one client request goes (a POST response, or a legacy SSE stream). */
export interface RequestSink {
  /** Carries a server message related to the request; false when it cannot (the session stream is tried next). */
  related(message: JsonRpcMessage): boolean;
  /** The final response; `httpStatus` is a hint for sinks that have not started answering (504 on timeout). */
  respond(response: JsonRpcResponse, httpStatus?: number): void;
}

/** A session's stream for messages unrelated to a request (the GET stream, or the legacy SSE stream). */
export interface SessionChannel {
  send(message: JsonRpcMessage): boolean;
  close(): void;
}

export class BridgeSession {
  /** The client's declared capabilities; undefined when unknown (stateless clients). */
  capabilities?: Record<string, unknown>;
  /** The client's `initialize` clientInfo (sent in the envelope to a 2026-07-28 server). */
  clientInfo?: Record<string, unknown>;
  channel?: SessionChannel;
  /** Rank in LOG_LEVELS of the level the client set; undefined = everything the server sends. */
  logLevel?: number;
  lastAccess = Date.now();
  readonly subscriptions = new Set<string>();
  readonly inflight = new Set<PendingRequest>();
  /** Server requests waiting for this session's answer: id key → the server's id. */
  readonly serverRequests = new Map<string, JsonRpcId>();

  constructor(
    readonly id: string,
    readonly transport: ClientTransportKind,
    /** Ephemeral sessions live for one request (stateless mode, 2026-07-28 requests). */
    readonly ephemeral = false,
  ) {}
}

export interface PendingRequest {
  upstreamId: number;
  /** The request as the client sent it (after client policies), original id. */
  request: JsonRpcRequest;
  session?: BridgeSession;
  sink?: RequestSink;
  ctx?: MessageContext;
  /** Key of the rewritten progress token and the client's own token. */
  progress?: { key: string; token: string | number };
  timer?: NodeJS.Timeout;
  /** A bound of its own (the health ping); absent: the multiplexer's requestTimeoutMs. */
  timeoutMs?: number;
  /** For the proxy's own requests (initialize, subscription bookkeeping). */
  internal?: (response: JsonRpcResponse) => void;
  /** Runs on the server's response before it is delivered (subscription bookkeeping). */
  onResponse?: (response: JsonRpcResponse) => void;
  interactive: boolean;
  /** A `subscriptions/listen`: open until either side ends it, so no timeout. */
  listen?: boolean;
}

/** Methods that answer quickly and never make the server ask the client anything. */
const NON_INTERACTIVE = new Set([
  'ping',
  'initialize',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'logging/setLevel',
]);

/** The client capability a server request needs. */
const REQUIRED_CAPABILITY: Record<string, string> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

/** Protocol revisions a client may negotiate through the bridge (oldest first). */
export const KNOWN_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

export class RpcFailure extends Error {
  constructor(
    readonly error: JsonRpcError,
    readonly httpStatus = 502,
  ) {
    super(error.message);
  }
}

/** How long the era probe (`server/discover`) may take: a 2025 server may ignore it. */
const ERA_PROBE_MS = 10_000;

export interface MultiplexerOptions {
  /** Writes one message to the server; false when the server is unavailable. */
  send(message: JsonRpcMessage): boolean;
  policies: readonly MessagePolicy[];
  /** How long a request may wait for the server's answer (`upstream_timeout`); progress restarts it. */
  requestTimeoutMs: number;
  logger: Logger;
}

export class Multiplexer {
  #nextId = 1;
  readonly #pending = new Map<number, PendingRequest>();
  readonly #progress = new Map<string, PendingRequest>();
  readonly #serverRequests = new Map<string, BridgeSession>();
  readonly #sessions = new Set<BridgeSession>();
  readonly #subscribers = new Subscribers();
  /** Sessions with interactive requests in flight, and how many (attribution must not scan every session). */
  readonly #busy = new Map<BridgeSession, number>();
  /** Busy sessions whose request waits for its client's MRTR retry (see `waitForClient`). */
  readonly #waitingForClient = new Set<BridgeSession>();
  #initResult?: Record<string, unknown>;
  #initParams?: Record<string, unknown>;
  #init?: Promise<Record<string, unknown>>;
  #down?: string;
  #era?: Promise<BackendEra>;
  #knownEra?: BackendEra;
  /** The server's `server/discover` result, when it speaks 2026-07-28. */
  #discovered?: Record<string, unknown>;
  /** Listens and 2025-era sessions at a 2026-07-28 server. */
  readonly #modern: ModernUpstream;
  /** Rank of the log level last set on the server. */
  #serverLogLevel?: number;
  readonly #o: MultiplexerOptions;
  readonly #log: Logger;
  readonly #screensServerMessages: boolean;

  constructor(options: MultiplexerOptions) {
    this.#o = options;
    this.#screensServerMessages = inspectsServerMessages(options.policies);
    this.#log = options.logger;
    this.#modern = new ModernUpstream({
      log: options.logger,
      requestTimeoutMs: options.requestTimeoutMs,
      sessions: this.#sessions,
      subscribers: this.#subscribers,
      policies: options.policies,
      nextId: () => this.#nextId++,
      write: (message) => options.send(message),
      start: (pending, outgoing) => this.#start(pending, outgoing),
      finish: (pending) => this.#finish(pending),
      send: (session, request, sink, ctx) => this.#send(session, request, sink, ctx),
      deliverRelated: (session, pending, message, sink) =>
        this.#deliverRelated(session, pending, message, sink),
      deliverResponse: (pending, response) => this.#deliverResponse(pending, response),
    });
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  addSession(session: BridgeSession): void {
    this.#sessions.add(session);
  }

  // -------------------------------------------------------------------------------------------
  // Initialization

  /**
   * The initialize result for one client: initializes the server on first use (singleflight),
   * then answers from the cached result.
   */
  async initialize(request: JsonRpcRequest): Promise<Record<string, unknown>> {
    if ((await this.upstreamEra()) === 'modern') {
      this.#modern.openLegacyListen();
      const discovered = this.#discovered ?? {};
      const revision = negotiatedRevision(request.params?.protocolVersion);
      return initializeAnswer(request.id, discovered, revision).result as Record<string, unknown>;
    }
    const params = request.params ?? {};
    const upstream = await this.#upstreamInit({ ...params, capabilities: routable(params.capabilities) });
    const requested = request.params?.protocolVersion;
    const negotiated = typeof upstream.protocolVersion === 'string' ? upstream.protocolVersion : undefined;
    const version =
      typeof requested === 'string' &&
      KNOWN_VERSIONS.includes(requested) &&
      negotiated &&
      requested <= negotiated
        ? requested
        : negotiated;
    return { ...upstream, protocolVersion: version };
  }

  /** Initializes the server if no client has yet (for stateless and 2026-07-28 requests). */
  async ensureInitialized(capabilities: Record<string, unknown> = {}): Promise<void> {
    if (this.#initResult) return;
    if ((await this.upstreamEra()) === 'modern') return;
    await this.#upstreamInit({
      protocolVersion: KNOWN_VERSIONS[KNOWN_VERSIONS.length - 1],
      capabilities: routable(capabilities),
      clientInfo: { name: 'moat', version: '1' },
    });
  }

  #upstreamInit(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.#initResult) return Promise.resolve(this.#initResult);
    this.#init ??= this.#internalRequest('initialize', params).then((response) => {
      if (response.error || typeof response.result !== 'object' || response.result === null) {
        this.#init = undefined;
        throw new RpcFailure(
          response.error ?? {
            code: RPC.internalError,
            message: 'The MCP server sent an invalid initialize result',
          },
        );
      }
      this.#initResult = response.result as Record<string, unknown>;
      this.#initParams = params;
      this.#o.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return this.#initResult;
    });
    return this.#init;
  }

  /**
   * The server's era, probed once with `server/discover` before anything else reaches it. An
   * answer naming 2026-07-28 makes it modern; a refusal, another answer or silence past the bound
   * legacy. A server that is down is asked again by the next request.
   */
  upstreamEra(): Promise<BackendEra> {
    this.#era ??= this.#internalRequest(
      'server/discover',
      discoverProbe(0).params,
      Math.min(ERA_PROBE_MS, this.#o.requestTimeoutMs),
    ).then((response) => {
      if (this.#down !== undefined || this.#unavailable(response)) {
        this.#era = undefined;
        throw new RpcFailure(response.error ?? { code: RPC.serverError, message: 'unavailable' }, 503);
      }
      const era = eraOfDiscoverAnswer(response);
      if (era === 'modern') this.#discovered = response.result as Record<string, unknown>;
      this.#knownEra = era;
      this.#log.info({ era }, 'the stdio MCP server era');
      return era;
    });
    return this.#era;
  }

  /** The era, when the probe has finished. */
  get knownEra(): BackendEra | undefined {
    return this.#knownEra;
  }

  #unavailable(response: JsonRpcResponse): boolean {
    return response.error?.message.startsWith('The MCP server is not available') === true;
  }

  /** The server's initialize result (a 2026 server: its discover result), once known. */
  get serverInit(): Record<string, unknown> | undefined {
    return this.#initResult ?? this.#discovered;
  }

  /**
   * Pings the server (the proxy's own request) with its own bound; resolves with the round trip
   * in ms or an error text. A timed-out ping is dropped like any request, so none piles up.
   */
  async ping(timeoutMs: number): Promise<{ ms: number } | { error: string }> {
    const started = Date.now();
    // The era comes first (a ping as the first message would pin a dual-era server to 2025);
    // a 2026-07-28 server has no ping, so it is asked `server/discover`.
    const era = await this.upstreamEra().catch((err: unknown) => errorMessage(err));
    if (era !== 'modern' && era !== 'legacy') return { error: era };
    const response =
      era === 'modern'
        ? await this.#internalRequest('server/discover', discoverProbe(0).params, timeoutMs)
        : await this.#internalRequest('ping', {}, timeoutMs);
    return response.error ? { error: response.error.message } : { ms: Date.now() - started };
  }

  /** The pipes were re-attached: initialize again (a restarted server needs it; a running one answers again). */
  reattached(): void {
    if (this.#discovered) {
      this.#modern.reattached();
      return;
    }
    const params = this.#initParams;
    if (!this.#initResult || !params) return;
    void this.#internalRequest('initialize', params).then((response) => {
      if (response.error) {
        this.#log.warn(
          { error: response.error.message },
          'the stdio server refused initialize after re-attaching',
        );
        return;
      }
      this.#o.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    });
  }

  #internalRequest(
    method: string,
    params: Record<string, unknown>,
    timeoutMs?: number,
  ): Promise<JsonRpcResponse> {
    return new Promise((resolve) => {
      const pending: PendingRequest = {
        upstreamId: this.#nextId++,
        request: { jsonrpc: '2.0', id: 0, method, params },
        internal: resolve,
        interactive: false,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      };
      this.#start(pending, { jsonrpc: '2.0', id: pending.upstreamId, method, params });
    });
  }

  // -------------------------------------------------------------------------------------------
  // Client → server

  /** Sends a client request upstream; the response (or an error) reaches `sink`. */
  forwardRequest(
    session: BridgeSession,
    request: JsonRpcRequest,
    sink: RequestSink,
    ctx: MessageContext,
  ): void {
    session.lastAccess = Date.now();
    if (this.#discovered) {
      if (hasModernEnvelope(request)) this.#send(session, request, sink, ctx);
      else this.#modern.forwardLegacy(session, request, sink, ctx);
      return;
    }
    if (request.method === 'resources/subscribe' || request.method === 'resources/unsubscribe') {
      if (this.#answerSubscriptionLocally(session, request, sink)) return;
    }
    if (request.method === 'logging/setLevel' && this.#setLogLevel(session, request, sink)) return;
    this.#send(session, request, sink, ctx);
  }

  /** Sends one request upstream under a fresh id; its messages and answer reach `sink`. */
  #send(session: BridgeSession, request: JsonRpcRequest, sink: RequestSink, ctx?: MessageContext): void {
    const listen = this.#discovered !== undefined && request.method === 'subscriptions/listen';
    const pending: PendingRequest = {
      upstreamId: this.#nextId++,
      request,
      session,
      sink,
      interactive: !listen && !NON_INTERACTIVE.has(request.method),
      ...(listen ? { listen } : {}),
      ...(ctx ? { ctx } : {}),
    };
    let params = request.params;
    const meta = params?._meta;
    if (typeof meta === 'object' && meta !== null && 'progressToken' in meta) {
      const token = (meta as { progressToken?: unknown }).progressToken;
      if (typeof token === 'string' || typeof token === 'number') {
        const upstreamToken = `moat-${pending.upstreamId}`;
        pending.progress = { key: idKey(upstreamToken), token };
        params = { ...params, _meta: { ...meta, progressToken: upstreamToken } };
      }
    }
    pending.onResponse = this.#subscriptionBookkeeping(session, request);
    session.inflight.add(pending);
    if (listen) this.#modern.listenOpened(pending);
    this.#start(pending, { ...request, id: pending.upstreamId, ...(params === undefined ? {} : { params }) });
  }

  /** A client notification; `notifications/initialized` is the proxy's to send, so it is absorbed. */
  forwardNotification(session: BridgeSession, notification: JsonRpcNotification): void {
    session.lastAccess = Date.now();
    // Before the era probe nothing was asked of the server, and a first message would pick its era.
    if (notification.method === 'notifications/initialized' || this.#knownEra === undefined) return;
    if (notification.method === 'notifications/cancelled') {
      const requestId = notification.params?.requestId;
      const pending = [...session.inflight].find((p) => p.request.id === requestId);
      if (!pending) return;
      this.#finish(pending);
      this.#o.send({ ...notification, params: { ...notification.params, requestId: pending.upstreamId } });
      pending.sink?.respond(
        this.#errorResponse(pending, { code: RPC.serverError, message: 'Request cancelled' }),
      );
      return;
    }
    // A 2026 server takes no 2025-era notifications (roots/list_changed is gone in 2026-07-28).
    if (this.#discovered && !hasModernEnvelope(notification)) return;
    this.#o.send(notification);
  }

  /** A client's answer to a server request; false when this session has no such pending request. */
  forwardClientResponse(session: BridgeSession, response: JsonRpcResponse): boolean {
    if (response.id === null) return false;
    if (this.#modern.clientAnswered(session.id, response)) return true;
    const key = idKey(response.id);
    const owner = this.#serverRequests.get(key);
    // Session-less clients answer on a new POST (a new ephemeral session): any session-less
    // answer may settle a request sent to a session-less client; a stateful one must match.
    if (!owner || (owner !== session && !(owner.ephemeral && session.ephemeral))) return false;
    this.#serverRequests.delete(key);
    owner.serverRequests.delete(key);
    session.lastAccess = Date.now();
    this.#o.send(response);
    return true;
  }

  /** Ends a session: cancels its in-flight requests upstream and refuses the server's pending requests to it. */
  /**
   * A bridged request waits for its client's multi round-trip retry: its input requests are all
   * with the client, so the server is not working on it. While it waits it does not count when
   * attributing the server's requests, so an abandoned round (held until its state expires) does
   * not make every other client's input request ambiguous.
   */
  waitForClient(session: BridgeSession, waiting: boolean): void {
    if (waiting && this.#sessions.has(session)) this.#waitingForClient.add(session);
    else this.#waitingForClient.delete(session);
  }

  endSession(session: BridgeSession, reason: string): void {
    this.#sessions.delete(session);
    this.#waitingForClient.delete(session);
    for (const pending of [...session.inflight]) {
      this.#finish(pending);
      this.#o.send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: pending.upstreamId, reason },
      });
      pending.sink?.respond(this.#errorResponse(pending, { code: RPC.serverError, message: reason }));
    }
    for (const [key, id] of session.serverRequests) {
      this.#serverRequests.delete(key);
      this.#o.send(this.#serverError(id, `The client session ended (${reason})`));
    }
    session.serverRequests.clear();
    for (const uri of session.subscriptions) this.#dropSubscriber(session, uri);
    session.subscriptions.clear();
    const channel = session.channel;
    session.channel = undefined;
    channel?.close();
  }

  /** The server is gone for good: every in-flight request fails. */
  upstreamFailed(reason: string): void {
    this.#down = reason;
    for (const pending of [...this.#pending.values()]) {
      this.#finish(pending);
      this.#fail(
        pending,
        { code: RPC.serverError, message: `The MCP server is not available: ${reason}` },
        503,
      );
    }
  }

  get downReason(): string | undefined {
    return this.#down;
  }

  // -------------------------------------------------------------------------------------------
  // Server → client

  /**
   * One message from the server; `text` is the line it was parsed from. With it, an answer no
   * policy needs reaches its client at once, as the HTTP forwarder passes such answers through.
   */
  onUpstreamMessage(message: JsonRpcMessage, text?: string): void {
    if (isResponse(message)) this.#onResponse(message, text);
    else if (isRequest(message)) this.#onServerRequest(message);
    else this.#onServerNotification(message);
  }

  #onResponse(response: JsonRpcResponse, text: string | undefined): void {
    const pending = typeof response.id === 'number' ? this.#pending.get(response.id) : undefined;
    if (!pending) {
      this.#log.debug(
        { id: response.id },
        'response from the stdio server matches no pending request; dropped',
      );
      return;
    }
    this.#finish(pending);
    if (pending.internal) {
      pending.internal(response);
      return;
    }
    pending.onResponse?.(response);
    this.#deliverResponse(pending, { ...response, id: pending.request.id }, text);
  }

  /**
   * Delivers an answer to its client. With `text` (the server's line), an answer no policy needs
   * reaches its client at once, as the HTTP forwarder passes such answers through.
   */
  #deliverResponse(pending: PendingRequest, response: JsonRpcResponse, text?: string): void {
    const policies = this.#o.policies;
    if (
      pending.ctx &&
      policies.length > 0 &&
      (text === undefined || needsResponse(policies, pending.request.method, text))
    ) {
      void this.#deliverThroughPolicies(pending, response, pending.ctx);
    } else {
      pending.sink?.respond(response);
    }
  }

  async #deliverThroughPolicies(
    pending: PendingRequest,
    response: JsonRpcResponse,
    ctx: MessageContext,
  ): Promise<void> {
    let final: JsonRpcResponse;
    try {
      final = await runServerPolicies(this.#o.policies, response, pending.request, ctx);
    } catch (err) {
      this.#log.error({ err: errorMessage(err) }, 'a response policy failed');
      final = this.#errorResponse(pending, { code: RPC.internalError, message: 'A proxy policy failed' });
    }
    pending.sink?.respond(final);
  }

  #onServerRequest(request: JsonRpcRequest): void {
    if (request.method === 'ping') {
      this.#o.send({ jsonrpc: '2.0', id: request.id, result: {} });
      return;
    }
    const target = this.#attribute();
    if (!target) {
      this.#o.send(
        this.#serverError(
          request.id,
          `Moat could not attribute ${request.method} to one client session: the stdio server is shared and ` +
            'it was sent while no single client had a request in flight',
        ),
      );
      return;
    }
    const capability = REQUIRED_CAPABILITY[request.method];
    const caps = target.session.capabilities;
    if (capability && caps && !(capability in caps)) {
      this.#o.send({
        jsonrpc: '2.0',
        id: request.id,
        error: {
          code: RPC.methodNotFound,
          message: `The client did not declare the ${capability} capability`,
        },
      });
      return;
    }
    const screened = this.#screen(request, target.pending?.ctx ?? latestInteractive(target.session)?.ctx);
    if (!screened) return;
    const key = idKey(request.id);
    this.#serverRequests.set(key, target.session);
    target.session.serverRequests.set(key, request.id);
    if (!this.#deliverRelated(target.session, target.pending, screened)) {
      this.#serverRequests.delete(key);
      target.session.serverRequests.delete(key);
      this.#o.send(this.#serverError(request.id, 'The client has no open stream to receive server requests'));
    }
  }

  #onServerNotification(notification: JsonRpcNotification): void {
    const method = notification.method;
    const subscriptionId = this.#discovered ? subscriptionIdOf(notification) : undefined;
    if (subscriptionId !== undefined) {
      this.#modern.onListenNotification(notification, subscriptionId);
      return;
    }
    if (
      this.#discovered &&
      (method.endsWith('/list_changed') || method === 'notifications/resources/updated')
    ) {
      return;
    }
    if (method === 'notifications/progress') {
      const token = notification.params?.progressToken;
      const pending =
        typeof token === 'string' || typeof token === 'number' ? this.#progress.get(idKey(token)) : undefined;
      if (!pending?.session || !pending.progress) return;
      this.#armTimer(pending);
      const restored = {
        ...notification,
        params: { ...notification.params, progressToken: pending.progress.token },
      };
      this.#deliverRelated(pending.session, pending, restored);
      return;
    }
    if (method === 'notifications/cancelled') {
      const requestId = notification.params?.requestId;
      if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
      const key = idKey(requestId);
      const session = this.#serverRequests.get(key);
      if (!session) return;
      this.#serverRequests.delete(key);
      session.serverRequests.delete(key);
      this.#deliverRelated(session, latestInteractive(session), notification);
      return;
    }
    if (method.endsWith('/list_changed')) {
      for (const session of this.#sessions) session.channel?.send(notification);
      return;
    }
    if (method === 'notifications/resources/updated') {
      const uri = notification.params?.uri;
      if (typeof uri !== 'string') return;
      for (const session of this.#subscribers.of(uri)) session.channel?.send(notification);
      return;
    }
    const target = this.#attribute();
    if (!target) {
      this.#log.debug(
        { method },
        'server notification could not be attributed to one client session; dropped',
      );
      return;
    }
    if (method === 'notifications/message' && target.session.logLevel !== undefined) {
      const rank = LOG_LEVELS.indexOf(String(notification.params?.level));
      if (rank !== -1 && rank < target.session.logLevel) return;
    }
    this.#deliverRelated(target.session, target.pending, notification);
  }

  /** The one session with interactive requests in flight, and its most recent such request. */
  #attribute(): { session: BridgeSession; pending?: PendingRequest } | undefined {
    let [session] = this.#busy.keys();
    if (this.#busy.size !== 1) {
      const working = [...this.#busy.keys()].filter((busy) => !this.#waitingForClient.has(busy));
      if (working.length !== 1) return undefined;
      session = working[0];
    }
    return session && { session, pending: latestInteractive(session) };
  }

  #deliverRelated(
    session: BridgeSession,
    pending: PendingRequest | undefined,
    message: JsonRpcMessage,
    sink = pending?.sink,
  ): boolean {
    // Server requests were screened before they were routed (a refused one is answered there).
    const passed = isRequest(message)
      ? message
      : this.#screen(message, (pending ?? latestInteractive(session))?.ctx);
    if (!passed) return true;
    if (sink?.related(passed)) return true;
    return session.channel?.send(passed) ?? false;
  }

  /**
   * A server-originated message through the policies that screen them (guardrails): the message
   * to deliver, or undefined when refused (a request is then answered to the server with the
   * refusal, a notification dropped).
   */
  #screen(message: JsonRpcMessage, ctx: MessageContext | undefined): JsonRpcMessage | undefined {
    if (isResponse(message) || !this.#screensServerMessages) return message;
    return screenServerMessage(this.#o.policies, message, ctx, (answer) => this.#o.send(answer));
  }

  /**
   * Records the session's level and answers it; the server is told only when some session now
   * wants more verbose logs than it sends. False when the server has no logging (it answers itself).
   */
  #setLogLevel(session: BridgeSession, request: JsonRpcRequest, sink: RequestSink): boolean {
    const capabilities = this.#initResult?.capabilities;
    if (typeof capabilities !== 'object' || capabilities === null || !('logging' in capabilities))
      return false;
    const level = request.params?.level;
    const rank = LOG_LEVELS.indexOf(String(level));
    if (rank === -1) {
      sink.respond({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: RPC.invalidParams, message: `Unknown log level; use one of ${LOG_LEVELS.join(', ')}` },
      });
      return true;
    }
    session.logLevel = rank;
    this.#serverLogAtLeast(rank);
    sink.respond({ jsonrpc: '2.0', id: request.id, result: {} });
    return true;
  }

  /**
   * A session wants log messages at `level` and above (a 2026-07-28 request's `_meta` level): the
   * server is told when that is more verbose than what it sends now, if it has logging at all.
   */
  wantLogLevel(session: BridgeSession, level: string): void {
    const rank = LOG_LEVELS.indexOf(level);
    if (rank === -1) return;
    session.logLevel = rank;
    const capabilities = this.#initResult?.capabilities;
    if (typeof capabilities === 'object' && capabilities !== null && 'logging' in capabilities) {
      this.#serverLogAtLeast(rank);
    }
  }

  #serverLogAtLeast(rank: number): void {
    if (this.#discovered) return;
    if (this.#serverLogLevel !== undefined && rank >= this.#serverLogLevel) return;
    this.#serverLogLevel = rank;
    void this.#internalRequest('logging/setLevel', { level: LOG_LEVELS[rank] }).then((response) => {
      if (response.error)
        this.#log.warn({ error: response.error.message }, 'the stdio server refused logging/setLevel');
    });
  }

  // -------------------------------------------------------------------------------------------
  // Subscriptions (reference-counted per URI)

  /** Answers subscribe/unsubscribe that need no upstream call; true when answered. */
  #answerSubscriptionLocally(session: BridgeSession, request: JsonRpcRequest, sink: RequestSink): boolean {
    const uri = request.params?.uri;
    if (typeof uri !== 'string') return false;
    const count = this.#subscribers.of(uri).size;
    let local: boolean;
    if (request.method === 'resources/subscribe') {
      local = session.subscriptions.has(uri) || count > 0;
      if (local) this.#subscribers.add(session, uri);
    } else {
      local = !session.subscriptions.has(uri) || count > 1;
      if (local) this.#subscribers.remove(session, uri);
    }
    if (local) sink.respond({ jsonrpc: '2.0', id: request.id, result: {} });
    return local;
  }

  #subscriptionBookkeeping(
    session: BridgeSession,
    request: JsonRpcRequest,
  ): ((response: JsonRpcResponse) => void) | undefined {
    const uri = request.params?.uri;
    if (typeof uri !== 'string') return undefined;
    if (request.method === 'resources/subscribe') {
      return (response) => {
        if (!response.error) this.#subscribers.add(session, uri);
      };
    }
    if (request.method === 'resources/unsubscribe') {
      return (response) => {
        if (!response.error) this.#subscribers.remove(session, uri);
      };
    }
    return undefined;
  }

  /** A session went away: the last subscriber to a URI unsubscribes upstream. */
  #dropSubscriber(session: BridgeSession, uri: string): void {
    if (!this.#subscribers.remove(session, uri)) return;
    if (this.#discovered) this.#modern.openLegacyListen(true);
    else void this.#internalRequest('resources/unsubscribe', { uri });
  }

  // -------------------------------------------------------------------------------------------
  // Bookkeeping

  #start(pending: PendingRequest, outgoing: JsonRpcRequest): void {
    if (this.#down !== undefined || !this.#o.send(outgoing)) {
      pending.session?.inflight.delete(pending);
      const reason = this.#down ?? 'it is re-attaching and its queue is full';
      this.#fail(
        pending,
        { code: RPC.serverError, message: `The MCP server is not available: ${reason}` },
        503,
      );
      return;
    }
    this.#pending.set(pending.upstreamId, pending);
    if (pending.progress) this.#progress.set(pending.progress.key, pending);
    if (pending.interactive && pending.session) {
      this.#busy.set(pending.session, (this.#busy.get(pending.session) ?? 0) + 1);
    }
    this.#armTimer(pending);
  }

  /** (Re)starts the request's timeout; progress notifications restart it. */
  #armTimer(pending: PendingRequest): void {
    clearTimeout(pending.timer);
    if (pending.listen) return;
    pending.timer = setTimeout(() => this.#timeout(pending), this.#boundOf(pending));
    pending.timer.unref();
  }

  /** The bound ran out: the request fails as on the HTTP path (504), and a late answer matches nothing. */
  #timeout(pending: PendingRequest): void {
    if (!this.#pending.has(pending.upstreamId)) return;
    this.#finish(pending);
    this.#o.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: pending.upstreamId, reason: 'timeout' },
    });
    this.#fail(
      pending,
      { code: RPC.serverError, message: upstreamTimeoutMessage(this.#boundOf(pending)) },
      504,
    );
  }

  #boundOf(pending: PendingRequest): number {
    return pending.timeoutMs ?? this.#o.requestTimeoutMs;
  }

  #fail(pending: PendingRequest, error: JsonRpcError, httpStatus: number): void {
    if (pending.internal) pending.internal({ jsonrpc: '2.0', id: pending.upstreamId, error });
    else pending.sink?.respond(this.#errorResponse(pending, error), httpStatus);
  }

  #finish(pending: PendingRequest): void {
    clearTimeout(pending.timer);
    if (!this.#pending.delete(pending.upstreamId)) return;
    if (pending.interactive && pending.session) {
      const left = (this.#busy.get(pending.session) ?? 1) - 1;
      if (left > 0) this.#busy.set(pending.session, left);
      else this.#busy.delete(pending.session);
    }
    if (pending.progress) this.#progress.delete(pending.progress.key);
    if (pending.listen) this.#modern.listenFinished(pending);
    pending.session?.inflight.delete(pending);
  }

  #errorResponse(pending: PendingRequest, error: JsonRpcError): JsonRpcResponse {
    return { jsonrpc: '2.0', id: pending.request.id, error };
  }

  #serverError(id: JsonRpcId, message: string): JsonRpcResponse {
    return { jsonrpc: '2.0', id, error: { code: RPC.internalError, message } };
  }
}

function latestInteractive(session: BridgeSession): PendingRequest | undefined {
  let latest: PendingRequest | undefined;
  for (const pending of session.inflight) if (pending.interactive) latest = pending;
  return latest;
}

/** What the proxy declares upstream: the client's capabilities plus the server requests it can route. */
function routable(capabilities: unknown): Record<string, unknown> {
  const own =
    typeof capabilities === 'object' && capabilities !== null
      ? (capabilities as Record<string, unknown>)
      : {};
  return { sampling: {}, elicitation: {}, ...own };
}
