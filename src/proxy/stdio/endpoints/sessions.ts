/**
 * The client sessions of the stdio bridge, shared by its two client-facing adapters (streamable
 * HTTP and legacy SSE): the live sessions of this process (validated against the SessionStore on
 * every request), the client policy chain and the dispatch of one parsed client message to the
 * multiplexer.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { reject, sessionNotFound } from '../../pipeline/errors.js';
import { type EdgeRequest, type SessionRecord, type SessionStore } from '../../types.js';
import { errorMessage } from '../../../util/errors.js';
import { type Multiplexer } from '../mux.js';
import { MuxSession, RpcFailure } from '../session.js';
import { isNotification, isRequest, RPC, type JsonRpcId, type JsonRpcMessage } from '../../../mcp/jsonrpc.js';
import type { ClientTransportKind, MessageContext, MessagePolicy } from '../../../mcp/policy.js';
import type { Identity } from '../../../mcp/identity.js';
import { ownedBy, ownerFields } from '../../sessions/binding.js';
import type { TracePropagation } from '../../../telemetry/trace-context.js';
import { applyClientPolicies, messageContext } from '../../pipeline/client-policies.js';
import type { RequestSink } from '../../pipeline/answer-sink.js';

export interface ClientSessionsOptions {
  mux: Multiplexer;
  store: SessionStore;
  policies: readonly MessagePolicy[];
  serverName: string;
  sessionTtlMs: number;
  keepAliveMs: number;
  logger: Logger;
  /** Trace context for the server, in `params._meta`, when spans are exported. */
  tracePropagation?: TracePropagation;
}

export class ClientSessions {
  readonly sessions = new Map<string, MuxSession>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(readonly o: ClientSessionsOptions) {
    this.#sweeper = setInterval(
      () => void this.#sweep(),
      Math.max(1000, Math.min(o.sessionTtlMs / 2, 60_000)),
    );
    this.#sweeper.unref();
  }

  get mux(): Multiplexer {
    return this.o.mux;
  }

  context(request: EdgeRequest, transport: ClientTransportKind, session?: MuxSession): MessageContext {
    const sessionId = session && !session.ephemeral ? session.id : undefined;
    return messageContext(request, this.o.serverName, transport, sessionId);
  }

  /** Runs the client policies; a denial is thrown as a ProxyRejection. */
  async applyPolicies(
    request: EdgeRequest,
    message: JsonRpcMessage,
    ctx: MessageContext,
  ): Promise<JsonRpcMessage> {
    const approved = (await applyClientPolicies(this.o.policies, message, ctx, request)).message;
    // A stdio server has no headers: the trace context can only travel in the message.
    return (
      this.o.tracePropagation?.outgoing(request.annotations, request.req.headers, approved).message ??
      approved
    );
  }

  /** Creates a stored session for a client that completed initialize. */
  async createSession(
    identity: Identity,
    transport: ClientTransportKind,
    capabilities: Record<string, unknown> | undefined,
    protocolVersion?: string,
  ): Promise<MuxSession> {
    const now = Date.now();
    const record: SessionRecord = {
      id: randomUUID(),
      createdAt: now,
      lastAccess: now,
      ...(protocolVersion ? { protocolVersion } : {}),
      ...ownerFields(identity),
      metadata: {
        transport,
        backend: 'stdio',
        ...(capabilities ? { client_capabilities: JSON.stringify(capabilities) } : {}),
      },
    };
    await this.#storeCall(() => this.o.store.create(record));
    const session = new MuxSession(record.id, transport);
    session.capabilities = capabilities;
    this.sessions.set(session.id, session);
    this.o.mux.addSession(session);
    return session;
  }

  /** An open legacy SSE stream's session, before initialize (its capabilities come later). */
  async createLegacySession(identity: Identity): Promise<MuxSession> {
    return this.createSession(identity, 'sse', undefined);
  }

  /**
   * The live session for a client-facing id, validated against the store (which slides its TTL).
   * Unknown or expired → 404 `Session not found`; a session of the other transport or of another
   * principal is unknown too.
   */
  async resolve(
    identity: Identity,
    id: string | undefined,
    transport: ClientTransportKind,
    rpcId: JsonRpcId | null,
  ): Promise<MuxSession> {
    if (id === undefined || id === '') {
      throw transport === 'sse'
        ? reject(400, RPC.invalidRequest, 'The session_id query parameter is required', { id: rpcId })
        : reject(400, RPC.invalidRequest, 'The Mcp-Session-Id header is required (send initialize first)', {
            id: rpcId,
          });
    }
    const record = await this.#storeCall(() => this.o.store.get(id));
    let session = this.sessions.get(id);
    if (record && !ownedBy(record, identity)) throw sessionNotFound(rpcId);
    if (!record || (record.metadata.transport ?? transport) !== transport) {
      if (session) this.end(session, 'the session expired');
      throw sessionNotFound(rpcId);
    }
    if (!session) {
      // Known to the store but not to this process (restart): a legacy SSE session cannot
      // survive without its stream; a streamable one is rebuilt from the record.
      if (transport === 'sse') throw sessionNotFound(rpcId);
      session = new MuxSession(id, transport);
      session.capabilities = parseCapabilities(record.metadata.client_capabilities);
      this.sessions.set(id, session);
      this.o.mux.addSession(session);
    }
    session.lastAccess = Date.now();
    return session;
  }

  /** Ends a session here and in the store (`mux`: the multiplexer it is in, the main one by default). */
  end(session: MuxSession, reason: string, mux: Multiplexer = this.o.mux): void {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    mux.endSession(session, reason);
    if (!session.ephemeral) {
      this.o.store.delete(session.id).catch((err: unknown) => {
        this.o.logger.warn({ err: errorMessage(err) }, 'deleting a session from the store failed');
      });
    }
  }

  /**
   * Sends one parsed (and policy-approved) client message on. Requests answer through `sink`;
   * notifications and responses are accepted at once. Throws a ProxyRejection for a response
   * that answers nothing this session was asked. `mux`: the multiplexer of the process the
   * message goes to (the main one by default; a dual-era server's 2026-07-28 process).
   */
  async dispatch(
    session: MuxSession,
    message: JsonRpcMessage,
    sink: RequestSink,
    ctx: MessageContext,
    mux: Multiplexer = this.o.mux,
  ) {
    if (isRequest(message)) {
      // Once the server is initialized, no await: the request reaches its stdin in this turn.
      if (mux.serverInit === undefined) {
        try {
          await mux.ensureInitialized(session.capabilities);
        } catch (err) {
          if (!(err instanceof RpcFailure)) throw err;
          sink.respond({ jsonrpc: '2.0', id: message.id, error: err.error }, err.httpStatus);
          return;
        }
      }
      mux.forwardRequest(session, message, sink, ctx);
    } else if (isNotification(message)) {
      mux.forwardNotification(session, message);
    } else if (!mux.forwardClientResponse(session, message)) {
      throw reject(
        400,
        RPC.invalidRequest,
        `No server request with id ${JSON.stringify(message.id)} is waiting for this session`,
        {
          id: message.id,
        },
      );
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    for (const session of [...this.sessions.values()]) this.end(session, 'the proxy is shutting down');
    await Promise.resolve();
  }

  async #storeCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      this.o.logger.error({ err: errorMessage(err) }, 'session store call failed');
      throw reject(503, RPC.serverError, 'The session store is unavailable');
    }
  }

  /** Drops sessions idle past the TTL; an open standalone stream counts as activity. */
  async #sweep(): Promise<void> {
    const now = Date.now();
    for (const session of [...this.sessions.values()]) {
      if (now - session.lastAccess < this.o.sessionTtlMs) continue;
      if (session.channel) {
        session.lastAccess = now;
        await this.o.store.get(session.id).catch(() => undefined);
      } else {
        this.end(session, 'the session expired');
      }
    }
  }
}

function parseCapabilities(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
