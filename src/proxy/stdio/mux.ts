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
 * - The server's era is learned with its first message, `initialize` (`speaksStateless`, the
 *   rule of eras/decision.ts): a server that accepts it is initialized as above, a dual-era one
 *   included (its 2026-07-28 clients go to a second process, era-process.ts, whose multiplexer
 *   is `discoverOnly`: its first message is `server/discover`). Only a server that refuses it and names 2026-07-28 in `server/discover` is served as
 *   a 2026-07-28 server: 2026 requests pass through as sent, and 2025-era sessions are served
 *   in the other direction (eras/up's wire: `initialize` from discover, the `_meta` envelope
 *   on each request, `input_required` rounds as server→client requests, subscriptions on one
 *   `subscriptions/listen` of the proxy's own): that code is in eras/up.ts.
 */
import type { Logger } from 'pino';
import { upstreamTimeoutMessage } from '../pipeline/upstream-timeout.js';
import { LOG_LEVELS } from '../eras/down/translate.js';
import { discoverShowsStateless, hasStatelessEnvelope } from '../eras/decision.js';
import {
  discoverProbe,
  LATEST_SESSION_REVISION,
  SESSION_REVISIONS,
  STATELESS_REVISION,
} from '../../mcp/revisions.js';
import { initializeAnswer, negotiatedRevision } from '../eras/up/wire.js';
import { subscriptionIdOf } from './eras/up-listens.js';
import { StdioUpAdapter } from './eras/up.js';
import { Subscribers } from './subscribers.js';
import { errorMessage } from '../../util/errors.js';
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
} from '../../mcp/jsonrpc.js';
import {
  inspectsServerMessages,
  needsResponse,
  runServerPolicies,
  screenServerMessage,
  type MessageContext,
  type MessagePolicy,
} from '../../mcp/policy.js';
import type { RequestSink } from '../pipeline/answer-sink.js';
import { RpcFailure, type MuxSession, type PendingRequest } from './session.js';

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

/** How long the era probe (`server/discover`) may take: a 2025 server may ignore it. */
const ERA_PROBE_MS = 10_000;

export interface MultiplexerOptions {
  /** Writes one message to the server; false when the server is unavailable. */
  send(message: JsonRpcMessage): boolean;
  policies: readonly MessagePolicy[];
  /** How long a request may wait for the server's answer (`upstream_timeout`); progress restarts it. */
  requestTimeoutMs: number;
  logger: Logger;
  /**
   * The process is a dual-era server's second one, for the 2026-07-28 era (era-process.ts): its
   * first message is `server/discover`, never `initialize`, and only a server that names
   * 2026-07-28 there is served; anything else is refused (`RpcFailure`, 502).
   */
  discoverOnly?: boolean;
}

export class Multiplexer {
  #nextId = 1;
  readonly #pending = new Map<number, PendingRequest>();
  readonly #progress = new Map<string, PendingRequest>();
  readonly #serverRequests = new Map<string, MuxSession>();
  readonly #sessions = new Set<MuxSession>();
  readonly #subscribers = new Subscribers();
  /** Sessions with interactive requests in flight, and how many (attribution must not scan every session). */
  readonly #busy = new Map<MuxSession, number>();
  /** Busy sessions whose request waits for its client's MRTR retry (see `waitForClient`). */
  readonly #waitingForClient = new Set<MuxSession>();
  #initResult?: Record<string, unknown>;
  #initParams?: Record<string, unknown>;
  #down?: string;
  #era?: Promise<boolean>;
  #knownStateless?: boolean;
  /** The server's `server/discover` result, when it speaks 2026-07-28. */
  #discovered?: Record<string, unknown>;
  /** Listens and 2025-era sessions at a 2026-07-28 server. */
  readonly #modern: StdioUpAdapter;
  /** Rank of the log level last set on the server. */
  #serverLogLevel?: number;
  readonly #o: MultiplexerOptions;
  readonly #log: Logger;
  readonly #screensServerMessages: boolean;

  constructor(options: MultiplexerOptions) {
    this.#o = options;
    this.#screensServerMessages = inspectsServerMessages(options.policies);
    this.#log = options.logger;
    this.#modern = new StdioUpAdapter({
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

  addSession(session: MuxSession): void {
    this.#sessions.add(session);
  }

  // -------------------------------------------------------------------------------------------
  // Initialization

  /**
   * The initialize result for one client: the server's era is learned with this initialize when
   * it is the first message (singleflight), then every client is answered from the cached result.
   * A server that refused it and speaks 2026-07-28 is answered from its discover result.
   */
  async initialize(request: JsonRpcRequest): Promise<Record<string, unknown>> {
    const params = request.params ?? {};
    if (await this.speaksStateless({ ...params, capabilities: routable(params.capabilities) })) {
      this.#modern.openLegacyListen();
      const discovered = this.#discovered ?? {};
      const revision = negotiatedRevision(request.params?.protocolVersion);
      return initializeAnswer(request.id, discovered, revision).result as Record<string, unknown>;
    }
    const upstream = this.#initResult ?? {};
    const requested = request.params?.protocolVersion;
    const negotiated = typeof upstream.protocolVersion === 'string' ? upstream.protocolVersion : undefined;
    const version =
      typeof requested === 'string' &&
      SESSION_REVISIONS.includes(requested) &&
      negotiated &&
      requested <= negotiated
        ? requested
        : negotiated;
    return { ...upstream, protocolVersion: version };
  }

  /** Learns the server's era (with Moat's own initialize) if no client has yet: for 2026-07-28 requests. */
  async ensureInitialized(capabilities: Record<string, unknown> = {}): Promise<void> {
    await this.speaksStateless({
      protocolVersion: LATEST_SESSION_REVISION,
      capabilities: routable(capabilities),
      clientInfo: { name: 'moat', version: '1' },
    });
  }

  /**
   * Whether the server speaks 2026-07-28 rather than a session era, learned once (the era
   * decision's rule, eras/decision.ts). A stdio server picks its era from the first message it
   * reads, for the life of the process, so the first message is `initialize` (`params`: the first
   * client's, or Moat's own): a server that accepts it is a session-era server, initialized and
   * served 2025 sessions natively (a dual-era server included; its 2026-07-28 clients go to a
   * second process, era-process.ts, or are bridged). A
   * server that refuses it is asked `server/discover`: naming 2026-07-28 makes it stateless. A
   * server that is down, or refuses both, is asked again by the next request.
   */
  speaksStateless(params: Record<string, unknown>): Promise<boolean> {
    this.#era ??= this.#learnEra(params).then(
      (stateless) => {
        this.#knownStateless = stateless;
        this.#log.info({ era: stateless ? STATELESS_REVISION : 'session' }, 'the stdio MCP server era');
        return stateless;
      },
      (err: unknown) => {
        this.#era = undefined;
        throw err;
      },
    );
    return this.#era;
  }

  async #learnEra(params: Record<string, unknown>): Promise<boolean> {
    if (this.#o.discoverOnly) return this.#discover();
    const init = await this.#internalRequest('initialize', params);
    this.#throwIfDown(init);
    if (typeof init.result === 'object' && init.result !== null) {
      this.#initResult = init.result as Record<string, unknown>;
      this.#initParams = params;
      this.#o.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return false;
    }
    return this.#discover(
      init.error ?? { code: RPC.internalError, message: 'The MCP server sent an invalid initialize result' },
    );
  }

  /**
   * Asks the server `server/discover`: it speaks 2026-07-28 when it names it there. Otherwise
   * fails with `refusal` (by default: that the process, a dual-era server's second one, does not).
   */
  async #discover(refusal?: JsonRpcError): Promise<boolean> {
    const discover = await this.#internalRequest(
      'server/discover',
      discoverProbe(0).params,
      Math.min(ERA_PROBE_MS, this.#o.requestTimeoutMs),
    );
    this.#throwIfDown(discover);
    if (!discoverShowsStateless(discover)) {
      throw new RpcFailure(
        refusal ?? {
          code: RPC.internalError,
          message: `The MCP server's second process does not speak ${STATELESS_REVISION}${
            discover.error ? `: ${discover.error.message}` : ''
          }`,
        },
      );
    }
    this.#discovered = discover.result as Record<string, unknown>;
    return true;
  }

  #throwIfDown(response: JsonRpcResponse): void {
    if (this.#down === undefined && !this.#unavailable(response)) return;
    throw new RpcFailure(response.error ?? { code: RPC.serverError, message: 'unavailable' }, 503);
  }

  /** Whether the server speaks 2026-07-28, once its era is learned. */
  get knownStateless(): boolean | undefined {
    return this.#knownStateless;
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
    // The era comes first (the first message picks a dual-era server's era);
    // a 2026-07-28 server has no ping, so it is asked `server/discover`.
    const stateless = await this.ensureInitialized().then(
      () => this.#knownStateless === true,
      (err: unknown) => errorMessage(err),
    );
    if (typeof stateless === 'string') return { error: stateless };
    const response = stateless
      ? await this.#internalRequest('server/discover', discoverProbe(0).params, timeoutMs)
      : await this.#internalRequest('ping', {}, timeoutMs);
    return response.error ? { error: response.error.message } : { ms: Date.now() - started };
  }

  /** The pipes were re-attached: initialize again (a restarted server needs it; a running one answers again). */
  reattached(): void {
    if (this.#discovered) this.#modern.reattached();
    // The pipes may lead to a new process, perhaps an upgraded one: its era is learned again. A
    // session-era server gets the same initialize at once (its clients' sessions go on); any
    // other is asked by the next request.
    const params = this.#initParams;
    this.#era = undefined;
    this.#knownStateless = undefined;
    this.#initResult = undefined;
    this.#discovered = undefined;
    if (!params) return;
    this.speaksStateless(params).catch((err: unknown) =>
      this.#log.warn({ error: errorMessage(err) }, 'the stdio server refused initialize after re-attaching'),
    );
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
  forwardRequest(session: MuxSession, request: JsonRpcRequest, sink: RequestSink, ctx: MessageContext): void {
    session.lastAccess = Date.now();
    if (this.#discovered) {
      if (hasStatelessEnvelope(request)) this.#send(session, request, sink, ctx);
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
  #send(session: MuxSession, request: JsonRpcRequest, sink: RequestSink, ctx?: MessageContext): void {
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
  forwardNotification(session: MuxSession, notification: JsonRpcNotification): void {
    session.lastAccess = Date.now();
    // Before the era probe nothing was asked of the server, and a first message would pick its era.
    if (notification.method === 'notifications/initialized' || this.#knownStateless === undefined) return;
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
    if (this.#discovered && !hasStatelessEnvelope(notification)) return;
    this.#o.send(notification);
  }

  /** A client's answer to a server request; false when this session has no such pending request. */
  forwardClientResponse(session: MuxSession, response: JsonRpcResponse): boolean {
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
  waitForClient(session: MuxSession, waiting: boolean): void {
    if (waiting && this.#sessions.has(session)) this.#waitingForClient.add(session);
    else this.#waitingForClient.delete(session);
  }

  endSession(session: MuxSession, reason: string): void {
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
    this.failInFlight(reason);
  }

  /**
   * Every request in flight fails now with `reason` rather than at its timeout: the process they
   * were written to is gone (a dual-era server's second process, whose pipes end with it).
   */
  failInFlight(reason: string): void {
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
  #attribute(): { session: MuxSession; pending?: PendingRequest } | undefined {
    let [session] = this.#busy.keys();
    if (this.#busy.size !== 1) {
      const working = [...this.#busy.keys()].filter((busy) => !this.#waitingForClient.has(busy));
      if (working.length !== 1) return undefined;
      session = working[0];
    }
    return session && { session, pending: latestInteractive(session) };
  }

  #deliverRelated(
    session: MuxSession,
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
  #setLogLevel(session: MuxSession, request: JsonRpcRequest, sink: RequestSink): boolean {
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
  wantLogLevel(session: MuxSession, level: string): void {
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
  #answerSubscriptionLocally(session: MuxSession, request: JsonRpcRequest, sink: RequestSink): boolean {
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
    session: MuxSession,
    request: JsonRpcRequest,
  ): ((response: JsonRpcResponse) => void) | undefined {
    const uri = request.params?.uri;
    if (typeof uri !== 'string') return undefined;
    if (request.method === 'resources/subscribe') {
      // Subscribed from the moment the request goes out: a server may send the URI's first
      // resources/updated before its answer (the SDK's servers do when a request that changes
      // the resource arrives in the same read), and that notification must not be lost.
      this.#subscribers.add(session, uri);
      return (response) => {
        if (response.error) this.#subscribers.remove(session, uri);
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
  #dropSubscriber(session: MuxSession, uri: string): void {
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
    if (pending.internal) {
      pending.internal({ jsonrpc: '2.0', id: pending.upstreamId, error });
      return;
    }
    const response = this.#errorResponse(pending, error);
    pending.onResponse?.(response);
    pending.sink?.respond(response, httpStatus);
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

function latestInteractive(session: MuxSession): PendingRequest | undefined {
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
