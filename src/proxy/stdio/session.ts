/**
 * A client session of the stdio multiplexer (mux.ts), the requests it has in flight upstream, and
 * the failure a request to the server ends with. Shared by the multiplexer, its HTTP endpoints and
 * its era adapters, which must not import the multiplexer for them.
 */
import type {
  JsonRpcError,
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../../mcp/jsonrpc.js';
import type { ClientTransportKind, MessageContext } from '../../mcp/policy.js';
import type { RequestSink } from '../pipeline/answer-sink.js';

/** A session's stream for messages unrelated to a request (the GET stream, or the legacy SSE stream). */
export interface SessionChannel {
  send(message: JsonRpcMessage): boolean;
  close(): void;
}

export class MuxSession {
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
  session?: MuxSession;
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

/** A request to the server that failed (or could not be sent), with the HTTP status it maps to. */
export class RpcFailure extends Error {
  constructor(
    readonly error: JsonRpcError,
    readonly httpStatus = 502,
  ) {
    super(error.message);
  }
}
