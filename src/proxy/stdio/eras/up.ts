/**
 * What the multiplexer does only for a 2026-07-28 server (one that answered `server/discover`):
 * the open `subscriptions/listen` requests, routed by the multiplexer's own upstream ids (see
 * up-listens.ts), and 2025-era sessions served in the other direction with eras/up's wire code:
 * `initialize` answered from discover, the `_meta` envelope on each request, `input_required`
 * rounds as server→client requests, and subscriptions and list changes on one
 * `subscriptions/listen` of the proxy's own. The byte path (ids, pending table, timers,
 * attribution) stays in the multiplexer; this module reaches it through `MuxCore` only.
 */
import type { Logger } from 'pino';
import { LOG_LEVELS } from '../../eras/down/translate.js';
import {
  errorAnswer,
  isInputRequired,
  sessionEraAnswer,
  withEnvelope,
  type ClientFacts,
} from '../../eras/up/wire.js';
import {
  askClient,
  InputRoundError,
  MAX_INPUT_ROUNDS,
  PendingClientAnswers,
  retryRequest,
} from '../../eras/up/input-rounds.js';
import { sessionEraListenFilter, ListenRoutes } from './up-listens.js';
import type { Subscribers } from '../subscribers.js';
import { type MuxSession, type PendingRequest } from '../session.js';
import { errorMessage } from '../../../util/errors.js';
import { RPC, type JsonRpcId, type JsonRpcMessage } from '../../../mcp/jsonrpc.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import type { MessageContext, MessagePolicy } from '../../../mcp/policy.js';
import type { RequestSink } from '../../pipeline/answer-sink.js';

/** The multiplexer's state and byte path, as far as the 2026-server code needs them. */
export interface MuxCore {
  readonly log: Logger;
  readonly requestTimeoutMs: number;
  readonly sessions: ReadonlySet<MuxSession>;
  readonly subscribers: Subscribers;
  /** The message policies (the server's questions to a 2025-era client pass them). */
  readonly policies: readonly MessagePolicy[];
  /** A fresh upstream id. */
  nextId(): number;
  /** Writes one message to the server as it is. */
  write(message: JsonRpcMessage): boolean;
  /** Records a pending request and writes it (or fails it when the server is unavailable). */
  start(pending: PendingRequest, outgoing: JsonRpcRequest): void;
  /** Drops a pending request from every table. */
  finish(pending: PendingRequest): void;
  /** Sends a session's request under a fresh id; its messages and answer reach `sink`. */
  send(session: MuxSession, request: JsonRpcRequest, sink: RequestSink, ctx?: MessageContext): void;
  deliverRelated(
    session: MuxSession,
    pending: PendingRequest | undefined,
    message: JsonRpcMessage,
    sink?: RequestSink,
  ): boolean;
  /** Delivers a final answer to its client through the response policies. */
  deliverResponse(pending: PendingRequest, response: JsonRpcResponse): void;
}

export class StdioUpAdapter {
  /** Open `subscriptions/listen` requests at the server, by upstream id. */
  readonly #listens = new ListenRoutes<PendingRequest>();
  /** The proxy's own listen for its 2025-era sessions' list changes and subscriptions. */
  #legacyListen?: PendingRequest;
  /** Server→client requests the proxy asks 2025-era clients for the server's input rounds. */
  readonly #clientAnswers = new PendingClientAnswers();

  constructor(private readonly core: MuxCore) {}

  listenOpened(pending: PendingRequest): void {
    this.#listens.open(pending.upstreamId, pending);
  }

  listenFinished(pending: PendingRequest): void {
    this.#listens.close(pending.upstreamId);
    if (pending === this.#legacyListen) this.#legacyListen = undefined;
  }

  /** A 2025-era client's answer to an input round; false when none of its rounds asked it. */
  clientAnswered(sessionId: string, response: JsonRpcResponse): boolean {
    return this.#clientAnswers.answer(sessionId, response);
  }

  /** The server may be a new process: every client listen ends (the client listens again), the proxy's reopens. */
  reattached(): void {
    for (const pending of this.#listens.all()) {
      if (pending === this.#legacyListen) continue;
      this.core.finish(pending);
      pending.sink?.respond({
        jsonrpc: '2.0',
        id: pending.request.id,
        error: { code: RPC.serverError, message: 'the MCP server was re-attached' },
      });
    }
    if (this.#legacyListen) this.openLegacyListen(true);
  }

  /**
   * (Re)opens the proxy's own listen for 2025-era sessions: every list change, and the URIs any
   * session subscribed to. Replaces the open one (its filter is fixed when it opens).
   */
  openLegacyListen(force = false): void {
    if (this.#legacyListen && !force) return;
    const old = this.#legacyListen;
    if (old) this.#stopListen(old, 'the subscriptions changed');
    const params = withEnvelope(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'subscriptions/listen',
        params: { notifications: sessionEraListenFilter(this.core.subscribers.uris()) },
      },
      { clientInfo: { name: 'moat', version: '1' }, capabilities: {} },
    ).params as Record<string, unknown>;
    const pending: PendingRequest = {
      upstreamId: this.core.nextId(),
      request: { jsonrpc: '2.0', id: 0, method: 'subscriptions/listen', params },
      internal: (response) => {
        if (response.error) this.core.log.warn({ error: response.error.message }, 'the proxy’s listen ended');
      },
      interactive: false,
      listen: true,
    };
    this.#legacyListen = pending;
    this.#listens.open(pending.upstreamId, pending);
    this.core.start(pending, {
      jsonrpc: '2.0',
      id: pending.upstreamId,
      method: 'subscriptions/listen',
      params,
    });
  }

  /** Ends one listen at the server (nothing more is delivered for it). */
  #stopListen(pending: PendingRequest, reason: string): void {
    this.core.finish(pending);
    this.core.write({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: pending.upstreamId, reason },
    });
  }

  /**
   * A notification the server stamped with a listen's id: to the client stream that listens
   * (the stamp restored to the client's own id), or, for the proxy's own listen, to the 2025-era
   * sessions as a 2025 server sends it. An unknown stamp matches no one and is dropped.
   */
  onListenNotification(notification: JsonRpcNotification, subscriptionId: JsonRpcId): void {
    const pending = typeof subscriptionId === 'number' ? this.#listens.get(subscriptionId) : undefined;
    if (!pending) {
      this.core.log.debug(
        { method: notification.method },
        'a listen notification for no open listen; dropped',
      );
      return;
    }
    if (pending === this.#legacyListen) {
      const plain = ListenRoutes.unstamped(notification);
      if (plain.method === 'notifications/subscriptions/acknowledged') return;
      this.#toLegacySessions(plain);
      return;
    }
    if (pending.session) {
      this.core.deliverRelated(
        pending.session,
        pending,
        ListenRoutes.restamped(notification, pending.request.id),
      );
    }
  }

  #toLegacySessions(notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/resources/updated') {
      const uri = notification.params?.uri;
      if (typeof uri !== 'string') return;
      for (const session of this.core.subscribers.of(uri)) session.channel?.send(notification);
      return;
    }
    for (const session of this.core.sessions) if (!session.ephemeral) session.channel?.send(notification);
  }

  /** A 2025-era session's request: answered by the proxy, or sent with the session's envelope. */
  forwardLegacy(session: MuxSession, request: JsonRpcRequest, sink: RequestSink, ctx: MessageContext): void {
    if (!this.#answerLegacyLocally(session, request, sink))
      void this.#forwardLegacyToModern(session, request, sink, ctx);
  }

  /** What a 2025-era session tells the server in each request's envelope. */
  #factsOf(session: MuxSession): ClientFacts {
    return {
      clientInfo: session.clientInfo ?? { name: 'unknown', version: '0' },
      capabilities: session.capabilities ?? {},
      // 2025 semantics: every log message until the client sets a level.
      logLevel: LOG_LEVELS[session.logLevel ?? 0],
    };
  }

  /** Requests a 2025-era session makes that the proxy answers itself in front of a 2026 server. */
  #answerLegacyLocally(session: MuxSession, request: JsonRpcRequest, sink: RequestSink): boolean {
    switch (request.method) {
      case 'ping':
        sink.respond({ jsonrpc: '2.0', id: request.id, result: {} });
        return true;
      case 'logging/setLevel': {
        const rank = LOG_LEVELS.indexOf(String(request.params?.level));
        if (rank === -1) {
          sink.respond(
            errorAnswer(
              request.id,
              `Unknown log level; use one of ${LOG_LEVELS.join(', ')}`,
              RPC.invalidParams,
            ),
          );
        } else {
          session.logLevel = rank;
          sink.respond({ jsonrpc: '2.0', id: request.id, result: {} });
        }
        return true;
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const uri = request.params?.uri;
        if (typeof uri !== 'string') {
          sink.respond(errorAnswer(request.id, 'params.uri must be a string', RPC.invalidParams));
          return true;
        }
        const subscribers = this.core.subscribers;
        const before = subscribers.size;
        if (request.method === 'resources/subscribe') subscribers.add(session, uri);
        else subscribers.remove(session, uri);
        if (subscribers.size !== before) this.openLegacyListen(true);
        sink.respond({ jsonrpc: '2.0', id: request.id, result: {} });
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * A 2025-era session's request to the server: sent with the session's envelope; each
   * `input_required` round becomes server→client requests on the request's stream (kinds the
   * client declared only), their answers the retry's `inputResponses`. The client policies ran on
   * the request as the client sent it; the response policies run once, on the final answer.
   */
  async #forwardLegacyToModern(
    session: MuxSession,
    request: JsonRpcRequest,
    sink: RequestSink,
    ctx: MessageContext,
  ): Promise<void> {
    const facts = this.#factsOf(session);
    let current = request;
    let response: JsonRpcResponse;
    try {
      for (let round = 0; ; round++) {
        response = await this.#roundTrip(session, withEnvelope(current, facts), sink);
        if (!isInputRequired(response)) break;
        if (round + 1 >= MAX_INPUT_ROUNDS) {
          throw new InputRoundError(`The MCP server kept asking for input (${MAX_INPUT_ROUNDS} rounds)`);
        }
        const result = response.result as { inputRequests?: unknown; requestState?: unknown };
        const inputResponses = await askClient(
          result.inputRequests,
          facts,
          (method, params) =>
            this.#clientAnswers.ask(
              session.id,
              method,
              params,
              (ask) => this.core.deliverRelated(session, undefined, ask, sink),
              AbortSignal.timeout(this.core.requestTimeoutMs),
            ),
          { policies: this.core.policies, ctx },
        );
        current = retryRequest(request, result, inputResponses);
      }
    } catch (err) {
      const failure = err instanceof InputRoundError ? err : new InputRoundError(errorMessage(err));
      response = errorAnswer(request.id, failure.message, failure.code);
    }
    this.core.deliverResponse(
      { upstreamId: 0, request, session, sink, ctx, interactive: false },
      sessionEraAnswer(response),
    );
  }

  /** One request to the server for a session, its answer returned instead of delivered. */
  #roundTrip(session: MuxSession, request: JsonRpcRequest, sink: RequestSink): Promise<JsonRpcResponse> {
    return new Promise((resolve) => {
      this.core.send(session, request, { related: (m) => sink.related(m), respond: (r) => resolve(r) });
    });
  }
}
