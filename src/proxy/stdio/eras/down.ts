/**
 * The era bridge for stdio servers: a 2026-07-28 request to a stdio server that speaks
 * 2025-11-25. The multiplexer already initialized the server once for every client; each bridged
 * request runs on a session of its own in the multiplexer (so its log level, its server requests
 * and its subscriptions belong to it alone), translated to 2025 shape on the way in and back to
 * 2026 shape on the way out. Client policies see the request as the client sent it.
 */
import type { EdgeRequest } from '../../types.js';
import { reject } from '../../pipeline/errors.js';
import type { ClientSessions } from '../endpoints/sessions.js';
import { MuxSession, RpcFailure } from '../session.js';
import { serveStdioListen } from './down-listen.js';
import type { EraProcess } from '../era-process.js';
import type { Multiplexer } from '../mux.js';
import { errorMessage } from '../../../util/errors.js';
import { localAnswer } from '../../eras/down/local.js';
import { httpStatusOfError } from '../../../mcp/envelope.js';
import { asInputRequest, QueuedCall, type InputBroker } from '../../eras/down/seam.js';
import {
  clientCapabilitiesOf,
  LOG_LEVELS,
  requestedLogLevel,
  toSessionEraRequest,
  toStatelessResponse,
} from '../../eras/down/translate.js';
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
import type { Identity } from '../../../mcp/identity.js';
import type { MessageContext } from '../../../mcp/policy.js';
import { acceptsOf, PostSink, type RequestSink } from '../../pipeline/answer-sink.js';

export class StdioDownAdapter {
  constructor(
    private readonly core: ClientSessions,
    private readonly broker: InputBroker | undefined,
    /** The second process of a dual-era server, when the backend can start one. */
    private readonly eraProcess?: EraProcess,
  ) {}

  /**
   * Where a 2026-07-28 request goes, by the server's era (learned by the multiplexer with its
   * first message): as sent to a 2026-07-28 server (the multiplexer to send it through); as sent
   * to a dual-era server's second process, which speaks 2026-07-28 (era-process.ts); bridged to a
   * session-era server that speaks nothing else, or whose second process cannot start. Asked
   * only once the client policies have approved the request.
   */
  async route(): Promise<Multiplexer | 'bridged'> {
    const mux = this.core.mux;
    try {
      if (mux.knownStateless === undefined) await mux.ensureInitialized();
    } catch (err) {
      if (err instanceof RpcFailure) throw reject(err.httpStatus, err.error.code, err.error.message);
      throw err;
    }
    if (mux.knownStateless === true) return mux;
    return (await this.eraProcess?.multiplexer()) ?? 'bridged';
  }

  /**
   * A 2026-07-28 request that goes to a 2026 server as sent, after the client policies: the
   * server's own `requestState` is bound to the principal here (the server is shared by every
   * user of the proxy, and cannot tell them apart), so a retry carries Moat's seal, opened for the
   * same principal and request only.
   */
  async native(request: EdgeRequest, approved: JsonRpcRequest): Promise<JsonRpcRequest> {
    if (approved.params?.requestState === undefined || !this.broker?.openServerState) return approved;
    return this.broker.openServerState(approved, request.identity);
  }

  /**
   * The sink for a native request: Moat is the stdio server's HTTP binding, so error answers get
   * the binding's statuses, and an InputRequiredResult gets its state sealed first.
   */
  nativeSink(request: EdgeRequest, approved: JsonRpcRequest, sink: PostSink): RequestSink {
    const broker = this.broker;
    return {
      related: (message) => sink.related(message),
      respond: (response, httpStatus) => {
        const result = response.result as { resultType?: unknown; requestState?: unknown } | undefined;
        if (result?.resultType !== 'input_required' || typeof result.requestState !== 'string') {
          sink.respond(response, response.error ? httpStatusOfError(response.error.code) : httpStatus);
          return;
        }
        if (!broker?.sealServerState) {
          sink.respond(response, httpStatus);
          return;
        }
        broker.sealServerState(result.requestState, approved, request.identity).then(
          (requestState) => sink.respond({ ...response, result: { ...result, requestState } }),
          (err: unknown) =>
            sink.respond(
              {
                jsonrpc: '2.0',
                id: response.id,
                error: {
                  code: RPC.serverError,
                  message: `Moat could not seal the request state: ${errorMessage(err)}`,
                },
              },
              503,
            ),
        );
      },
    };
  }

  /** Serves a 2026-07-28 message the client policies approved (`ctx`: theirs) on a session-era server. */
  async handle(request: EdgeRequest, approved: JsonRpcMessage, ctx: MessageContext): Promise<void> {
    const accepts = acceptsOf(request);
    // Capabilities stay unknown to the multiplexer: the call checks them (eras/down/seam.ts).
    const session = new MuxSession('', 'streamable-http', true);
    // 2026-07-28: log messages only for a request that asked for a level.
    session.logLevel = LOG_LEVELS.length;
    const mux = this.core.mux;
    mux.addSession(session);
    let owned = false;
    try {
      if (!isRequest(approved)) {
        if (isResponse(approved)) {
          throw reject(400, RPC.invalidRequest, 'MCP 2026-07-28 clients send no JSON-RPC responses');
        }
        request.res.writeHead(202).end();
        return;
      }
      if (approved.method === 'subscriptions/listen') {
        await serveStdioListen(mux, session, request, approved, ctx, this.core.o.keepAliveMs);
        return;
      }
      const sink = new PostSink(request, accepts, this.core.o.keepAliveMs);
      const local = await localAnswer(approved, request.identity, this.broker, async () => {
        await mux.ensureInitialized();
        return mux.serverInit ?? {};
      });
      if (local) {
        sink.respond(local);
        return;
      }
      const call = new StdioBridgedCall(approved, request.identity, this.core, session);
      request.res.once('close', () => {
        if (!request.res.writableFinished && !call.takenOver) call.cancel('the client closed the request');
      });
      const level = requestedLogLevel(approved);
      if (level) mux.wantLogLevel(session, level);
      await this.core.dispatch(session, toSessionEraRequest(approved), call.sink(sink), ctx);
      const response = await call.settle(this.broker);
      owned = call.takenOver;
      sink.respond(response, call.httpStatus);
      await sink.finished;
    } finally {
      if (!owned) mux.endSession(session, 'the request ended');
    }
  }
}

/** A bridged request in the multiplexer: its session carries the backend's input requests. */
class StdioBridgedCall extends QueuedCall {
  constructor(
    request: JsonRpcRequest,
    identity: Identity,
    private readonly core: ClientSessions,
    private readonly session: MuxSession,
  ) {
    super(request, identity, clientCapabilitiesOf(request));
  }

  /** Where the multiplexer delivers this request's messages: input requests become call events. */
  sink(post: PostSink): RequestSink {
    return {
      related: (message) => {
        if (isRequest(message)) {
          const input = asInputRequest(message);
          if (input) this.events.push({ kind: 'input', input });
          return input !== undefined;
        }
        return post.related(message);
      },
      respond: (response, httpStatus) => {
        if (response.error && httpStatus !== undefined) this.httpStatus = httpStatus;
        const serverInfo = this.core.mux.serverInit?.serverInfo;
        this.events.push({
          kind: 'final',
          response: toStatelessResponse(this.request.method, response, serverInfo),
        });
        if (this.takenOver) this.core.mux.endSession(this.session, 'the request ended');
      },
    };
  }

  answer(id: JsonRpcId, answer: { result: Record<string, unknown> } | { error: JsonRpcError }): void {
    const response: JsonRpcResponse = { jsonrpc: '2.0', id, ...answer };
    this.core.mux.forwardClientResponse(this.session, response);
  }

  waitForClient(waiting: boolean): void {
    this.core.mux.waitForClient(this.session, waiting);
  }

  cancel(reason: string): void {
    if (this.events.ended) return;
    // Ending the session cancels the request at the server; its error answer ends the call.
    this.core.mux.endSession(this.session, reason);
  }
}
