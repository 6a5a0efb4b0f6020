/**
 * A 2025-era client in front of a 2026-only server (no `initialize`, no sessions, no GET stream).
 * Beside the HTTP forwarder; the era decision (eras/decision.ts `httpRoute`) sends a request here
 * only for a session this serves, or for an `initialize` the backend refused (the forwarder's
 * SessionsRefused, before any byte reached the client): then this asks `server/discover`, and a
 * backend that names 2026-07-28 there gets the session served here.
 *
 * Here the proxy is the 2025-era server: it answers `initialize` from `server/discover`, mints
 * the session (in the session store, so any replica serves it), answers `ping`, keeps
 * `logging/setLevel` as the log level of later requests, and turns `resources/subscribe` into a
 * `subscriptions/listen` behind the session's GET stream. Every other request goes to the backend
 * with the session's `_meta` envelope and the 2026 headers; `resultType` is dropped from answers;
 * `input_required` rounds become server→client requests on the POST's stream (input-rounds.ts).
 * Client and server policies apply as on the forwarder.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { UpstreamAuth } from '../../../auth/outbound/types.js';
import {
  isRequest,
  isResponse,
  RPC,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../mcp/jsonrpc.js';
import { inspectsResponses, runServerPolicies, type MessageContext } from '../../../mcp/policy.js';
import { errorMessage } from '../../../util/errors.js';
import { applyClientPolicies, messageContext } from '../../pipeline/client-policies.js';
import type { RoundRelay } from '../../eras/rounds/relay.js';
import { ProxyRejection, reject, rpcErrorBody, sessionNotFound } from '../../pipeline/errors.js';
import { readMessage } from '../../pipeline/message.js';
import { ownerFields } from '../../sessions/binding.js';
import { abortOnClientClose, loadSession, touchSession, withStore } from '../context.js';
import { withDeadline } from '../deadline.js';
import type { SessionsRefused } from '../forwarder.js';
import { relayAnswer } from '../relay.js';
import { headerValue, upstreamHeaders, upstreamUrl, UpstreamClient } from '../upstream-client.js';
import { SseWriter, startEventStream } from '../../pipeline/sse.js';
import type { EdgeRequest, HttpBackend, SessionRecord, TransportOptions } from '../../types.js';
import {
  paramHeaderDeclarations,
  paramHeadersFor,
  type ParamHeaderDeclaration,
} from '../../eras/revision/param-headers.js';
import { REVERSE_SESSION_PREFIX, speaksStatelessRevision } from '../../eras/decision.js';
import { BrokenAnswer, callBackend } from './up-backend-call.js';
import {
  askClient,
  InputRoundError,
  MAX_INPUT_ROUNDS,
  PendingClientAnswers,
  retryRequest,
} from '../../eras/up/input-rounds.js';
import { SessionStreams } from './up-session-streams.js';
import {
  clientFactsOf,
  errorAnswer,
  headerText,
  initializeAnswer,
  isInputRequired,
  sessionEraAnswer,
  negotiatedRevision,
  withEnvelope,
  type ClientFacts,
} from '../../eras/up/wire.js';

const SESSION_ERA = 'modern-backend';

export interface HttpUpAdapterOptions extends TransportOptions {
  upstreamAuth?: UpstreamAuth;
  /** Hands a client's answer to the replica that asked (Redis session store); none: this process only. */
  answerRelay?: () => Promise<RoundRelay | undefined>;
}

interface SessionView {
  record: SessionRecord;
  facts: ClientFacts;
  subscriptions: string[];
}

function sessionView(record: SessionRecord): SessionView {
  const facts = JSON.parse(record.metadata.client ?? '{}') as ClientFacts;
  const level = record.metadata.logLevel;
  return {
    record,
    facts: level === undefined ? facts : { ...facts, logLevel: level },
    subscriptions: JSON.parse(record.metadata.subscriptions ?? '[]') as string[],
  };
}

function ok(id: JsonRpcRequest['id']): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result: {} };
}

/** What the composition (index.ts) asks of the reverse direction, as the era decision routes. */
export interface HttpUpAdapter {
  /** A request of a session served here (its id carries REVERSE_SESSION_PREFIX). */
  serveSession(request: EdgeRequest): Promise<void>;
  /** An `initialize` the backend refused: served here when it speaks 2026-07-28, else its refusal relayed. */
  initialize(request: EdgeRequest, refused: SessionsRefused): Promise<void>;
  close(): Promise<void>;
}

/** Serves 2025-era sessions itself in front of a backend that speaks only 2026-07-28. */
export function httpUpAdapter(backend: HttpBackend, options: HttpUpAdapterOptions): HttpUpAdapter {
  const logger: Logger = options.logger;
  const client = new UpstreamClient(options.upstreamAuth);
  const pending = new PendingClientAnswers(options.answerRelay);
  const streams = new SessionStreams();
  const store = { options };
  /** Logged once: the backend refuses 2025-era sessions and Moat serves them. */
  let announced = false;
  /** `x-mcp-header` declarations by the backend's tool names, from its `tools/list` answers. */
  const declared = new Map<string, ParamHeaderDeclaration[]>();
  const answersPolicies = inspectsResponses(options.policies);
  /** Requests this process is forwarding, by session and request id, for `notifications/cancelled`. */
  const inFlight = new Map<string, AbortController>();
  const inFlightKey = (sessionId: string, id: JsonRpcId) => JSON.stringify([sessionId, id]);

  /** Where and how a client's request goes upstream: its URL, identity and passed-on headers. */
  const target = (request: EdgeRequest) => {
    const clientHeaders = upstreamHeaders(request.req.headers, {
      remote: backend.remote,
      clientAddress: request.clientAddress,
      externalBaseUrl: request.externalBaseUrl,
    });
    delete clientHeaders['last-event-id'];
    return {
      client,
      url: upstreamUrl(backend, request.req.url ?? '/'),
      identity: request.identity,
      clientHeaders,
    };
  };
  const context = (request: EdgeRequest, sessionId?: string): MessageContext =>
    messageContext(request, options.config.name, 'streamable-http', sessionId);

  async function policed(request: EdgeRequest, sessionId?: string): Promise<JsonRpcMessage> {
    const received = await readMessage(request);
    return (await applyClientPolicies(options.policies, received, context(request, sessionId), request))
      .message;
  }

  async function answered(
    request: EdgeRequest,
    sent: JsonRpcRequest,
    response: JsonRpcResponse,
    sessionId: string,
  ): Promise<JsonRpcResponse> {
    if (!answersPolicies) return response;
    return runServerPolicies(options.policies, response, sent, context(request, sessionId));
  }

  function writeJson(
    request: EdgeRequest,
    response: JsonRpcResponse,
    headers: Record<string, string> = {},
  ): void {
    const body = JSON.stringify(response);
    request.res.writeHead(200, {
      ...headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    request.res.end(body);
  }

  /**
   * A 2025-era `initialize` the backend refused (`refused.approved`: after the client policies).
   * A backend that names 2026-07-28 in `server/discover` gets the session served here; any other
   * gets its own refusal relayed, as without Moat.
   */
  async function initialize(request: EdgeRequest, refused: SessionsRefused): Promise<void> {
    const message = refused.approved;
    const facts = clientFactsOf(message.params);
    const probe: JsonRpcRequest = withEnvelope(
      { jsonrpc: '2.0', id: message.id, method: 'server/discover', params: {} },
      facts,
    );
    let discovered: JsonRpcResponse;
    try {
      discovered = await withDeadline(
        options.upstreamTimeoutMs,
        abortOnClientClose(request),
        message.id,
        (d) => callBackend(probe, { ...target(request), signal: d.signal }),
      );
    } catch (err) {
      if (!(err instanceof BrokenAnswer)) throw err;
      discovered = errorAnswer(message.id, err.message);
    }
    if (!speaksStatelessRevision(discovered.result)) {
      await relayAnswer(refused.answer, request.res, message.id, undefined);
      return;
    }
    if (!announced) {
      announced = true;
      logger.info(
        'the MCP backend refuses 2025-era sessions and speaks 2026-07-28: the proxy serves 2025-era sessions itself',
      );
    }
    const revision = negotiatedRevision(message.params?.protocolVersion);
    const id = `${REVERSE_SESSION_PREFIX}${randomUUID()}`;
    const now = Date.now();
    const record: SessionRecord = {
      id,
      createdAt: now,
      lastAccess: now,
      protocolVersion: revision,
      metadata: {
        transport: 'streamable-http',
        era: SESSION_ERA,
        client: JSON.stringify(facts),
      },
      ...ownerFields(request.identity),
    };
    await withStore(store, (s) => s.create(record));
    request.annotations.sessionId = id;
    const answer = await answered(
      request,
      message,
      initializeAnswer(message.id, discovered.result, revision),
      id,
    );
    writeJson(request, answer, { 'mcp-session-id': id });
  }

  /** The backend's `subscriptions/listen` for a session's GET stream. */
  function listenFor(request: EdgeRequest, view: SessionView) {
    return (signal: AbortSignal, deliver: (n: JsonRpcNotification) => void) =>
      callBackend(
        withEnvelope(
          {
            jsonrpc: '2.0',
            id: `moat-listen-${randomUUID()}`,
            method: 'subscriptions/listen',
            params: {
              notifications: {
                toolsListChanged: true,
                promptsListChanged: true,
                resourcesListChanged: true,
                resourceSubscriptions: view.subscriptions,
              },
            },
          },
          view.facts,
        ),
        { ...target(request), signal, onNotification: deliver },
      ).then(() => undefined);
  }

  const onListenError = (err: unknown) =>
    logger.debug({ err: errorMessage(err) }, 'subscriptions/listen to the MCP backend ended');

  async function subscription(
    request: EdgeRequest,
    view: SessionView,
    message: JsonRpcRequest,
  ): Promise<JsonRpcResponse> {
    const uri = message.params?.uri;
    if (typeof uri !== 'string')
      return errorAnswer(message.id, 'params.uri must be a string', RPC.invalidParams);
    const others = view.subscriptions.filter((u) => u !== uri);
    const subscriptions = message.method === 'resources/subscribe' ? [...others, uri] : others;
    await withStore(store, (s) =>
      s.update(view.record.id, {
        metadata: { ...view.record.metadata, subscriptions: JSON.stringify(subscriptions) },
      }),
    );
    streams.relisten(view.record.id, listenFor(request, { ...view, subscriptions }), onListenError);
    return ok(message.id);
  }

  /** Headers the 2026 server expects beyond the standard ones: `Mcp-Param-*` for declared arguments. */
  function paramHeaders(message: JsonRpcRequest): Record<string, string> {
    if (message.method !== 'tools/call') return {};
    const name = message.params?.name;
    const declarations = typeof name === 'string' ? declared.get(name) : undefined;
    return declarations ? paramHeadersFor(declarations, message.params?.arguments, headerText) : {};
  }

  function learnTools(response: JsonRpcResponse): void {
    const tools = (response.result as { tools?: unknown } | undefined)?.tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Array<{ name?: unknown; inputSchema?: unknown }>) {
      if (typeof tool.name !== 'string') continue;
      const declarations = paramHeaderDeclarations(tool.inputSchema);
      if (declarations.length > 0) declared.set(tool.name, declarations);
      else declared.delete(tool.name);
    }
  }

  /** A request the backend answers, with its `input_required` rounds. */
  async function forward(request: EdgeRequest, view: SessionView, message: JsonRpcRequest): Promise<void> {
    const sessionId = view.record.id;
    const accept = headerValue(request.req.headers, 'accept') ?? '';
    const canStream = accept.includes('text/event-stream');
    let writer: SseWriter | undefined;
    const stream = (): SseWriter | undefined => {
      if (!canStream) return undefined;
      if (!writer) {
        startEventStream(request.res, { 'mcp-session-id': sessionId });
        writer = new SseWriter(request.res, { keepAliveMs: options.keepAliveMs });
      }
      return writer;
    };
    // The client cancelling the request (`notifications/cancelled`) ends it like going away.
    const cancelled = new AbortController();
    const key = inFlightKey(sessionId, message.id);
    inFlight.set(key, cancelled);
    const clientGone = AbortSignal.any([abortOnClientClose(request), cancelled.signal]);
    let current = message;
    let response: JsonRpcResponse;
    try {
      for (let round = 0; ; round++) {
        const sent = withEnvelope(current, view.facts);
        response = await withDeadline(options.upstreamTimeoutMs, clientGone, message.id, (d) =>
          callBackend(sent, {
            ...target(request),
            headers: paramHeaders(current),
            signal: d.signal,
            onNotification: (n) => stream()?.message(n),
          }),
        );
        if (!isInputRequired(response)) break;
        if (round + 1 >= MAX_INPUT_ROUNDS) {
          throw new InputRoundError(`The MCP server kept asking for input (${MAX_INPUT_ROUNDS} rounds)`);
        }
        if (!canStream)
          throw new InputRoundError(
            'The MCP server needs input, but the request does not accept an event stream',
          );
        const result = response.result as { inputRequests?: unknown; requestState?: unknown };
        const inputResponses = await withDeadline(options.upstreamTimeoutMs, clientGone, message.id, (d) =>
          askClient(
            result.inputRequests,
            view.facts,
            (method, params) =>
              pending.ask(sessionId, method, params, (req) => stream()?.message(req) ?? false, d.signal),
            { policies: options.policies, ctx: context(request, sessionId) },
          ),
        );
        current = retryRequest(message, result, inputResponses);
      }
    } catch (err) {
      if (cancelled.signal.aborted) {
        // A cancelled request gets no answer (2025-11-25): its stream just ends.
        if (writer) writer.end();
        else request.res.writeHead(204).end();
        return;
      }
      if (err instanceof InputRoundError) response = errorAnswer(message.id, err.message, err.code);
      else if (writer && err instanceof ProxyRejection)
        response = { jsonrpc: '2.0', id: message.id, error: err.rpcError };
      else throw err;
    } finally {
      inFlight.delete(key);
    }
    if (message.method === 'tools/list') learnTools(response);
    const final = await answered(request, message, sessionEraAnswer(response), sessionId);
    if (writer) {
      await writer.write(`event: message\ndata: ${JSON.stringify(final)}\n\n`);
      writer.end();
    } else {
      writeJson(request, final, { 'mcp-session-id': sessionId });
    }
  }

  /** A client's answer to a question of ours, wherever it waits; a failing relay refuses it. */
  async function deliverAnswer(sessionId: string, answer: JsonRpcResponse): Promise<boolean> {
    try {
      return await pending.deliver(sessionId, answer, options.upstreamTimeoutMs);
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'could not hand a client answer to another proxy replica');
      return false;
    }
  }

  async function post(request: EdgeRequest, view: SessionView): Promise<void> {
    const sessionId = view.record.id;
    const message = await policed(request, sessionId);
    if (isResponse(message)) {
      if (!(await deliverAnswer(sessionId, message))) {
        throw reject(
          400,
          RPC.invalidRequest,
          'No request waits for this answer: it ended, timed out, or the proxy replica that asked went away',
          { id: message.id },
        );
      }
      request.res.writeHead(202).end();
      return;
    }
    if (!isRequest(message)) {
      if (message.method === 'notifications/cancelled') {
        const requestId = message.params?.requestId;
        if (typeof requestId === 'string' || typeof requestId === 'number') {
          inFlight.get(inFlightKey(sessionId, requestId))?.abort(new Error('cancelled by the client'));
        }
      }
      request.res.writeHead(202).end();
      return;
    }
    switch (message.method) {
      case 'ping':
        return writeJson(request, await answered(request, message, ok(message.id), sessionId));
      case 'initialize':
        return writeJson(
          request,
          errorAnswer(message.id, 'The session is already initialized', RPC.invalidRequest),
        );
      case 'logging/setLevel': {
        const level = message.params?.level;
        if (typeof level !== 'string') {
          return writeJson(
            request,
            errorAnswer(message.id, 'params.level must be a string', RPC.invalidParams),
          );
        }
        await withStore(store, (s) =>
          s.update(sessionId, { metadata: { ...view.record.metadata, logLevel: level } }),
        );
        return writeJson(request, ok(message.id));
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return writeJson(request, await subscription(request, view, message));
      default:
        return forward(request, view, message);
    }
  }

  async function serveSession(request: EdgeRequest, id: string): Promise<void> {
    const record = await loadSession(store, id, request.identity);
    if (!record || record.metadata.era !== SESSION_ERA) throw sessionNotFound();
    request.annotations.sessionId = id;
    const view = sessionView(record);
    switch (request.req.method) {
      case 'POST':
        return post(request, view);
      case 'GET':
        streams.open(
          id,
          request.res,
          {
            keepAliveMs: options.keepAliveMs,
            onKeepAlive: () => touchSession(store, id),
            onError: onListenError,
          },
          listenFor(request, view),
        );
        return;
      case 'DELETE':
        streams.close(id);
        await withStore(store, (s) => s.delete(id));
        request.res.writeHead(200).end();
        return;
      default:
        request.res.writeHead(405, { allow: 'GET, POST, DELETE', 'content-type': 'application/json' });
        request.res.end(rpcErrorBody({ code: RPC.invalidRequest, message: 'Method not allowed' }));
    }
  }

  return {
    serveSession: (request) =>
      serveSession(request, headerValue(request.req.headers, 'mcp-session-id') ?? ''),
    initialize,
    close: async () => {
      streams.closeAll();
      await client.close();
    },
  };
}
