/**
 * Contracts shared by the proxy's parts: the HTTP edge, the transports on both sides, the
 * per-message pipeline and the session stores. Transports turn their wire format into JSON-RPC
 * messages and back; policies only ever see messages, never HTTP or SSE framing.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';

// ---------------------------------------------------------------------------------------------
// JSON-RPC

export type JsonRpcId = string | number;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: unknown;
  error?: JsonRpcError;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** Error codes Moat uses in JSON-RPC error bodies. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Generic server-side failure (timeouts, backend unavailable). */
  serverError: -32000,
  sessionNotFound: -32001,
  /** 2026-07-28: Mcp-Method/Mcp-Name header missing or not matching the body. */
  headerMismatch: -32020,
  missingClientCapability: -32021,
  unsupportedProtocolVersion: -32022,
} as const;

// ---------------------------------------------------------------------------------------------
// Identity: who is calling. Set by authentication at the edge; a synthetic local user when no
// authentication is configured.

export interface Identity {
  subject: string;
  name?: string;
  email?: string;
  /** Group and role claims, already extracted per the authz config's claim names. */
  groups: string[];
  claims: Record<string, unknown>;
  /** True for the synthetic identity used when no authentication is configured. */
  local: boolean;
  /** The validated bearer token; only for token exchange. Never logged, never forwarded upstream. */
  token?: string;
}

// ---------------------------------------------------------------------------------------------
// Sessions

export interface SessionRecord {
  /** Client-facing session ID (cryptographically random). */
  id: string;
  /** The backend's own session ID, when the backend minted one. */
  backendSessionId?: string;
  createdAt: number;
  /** Last access (ms since epoch); sliding expiry counts from here. */
  lastAccess: number;
  /** Negotiated MCP protocol version, when known. */
  protocolVersion?: string;
  /** Free-form string metadata (backend URL, transport, ...). */
  metadata: Record<string, string>;
}

export interface SessionStore {
  /** Stores a new session. */
  create(record: SessionRecord): Promise<void>;
  /** Loads a session and refreshes its sliding TTL; undefined when unknown or expired. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Merges fields into an existing session (no-op when it is gone). */
  update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<void>;
  /** Deletes a session; deleting an unknown one is not an error. */
  delete(id: string): Promise<void>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Per-message pipeline

export type ClientTransportKind = 'streamable-http' | 'sse';

export interface MessageContext {
  /** Client-facing session ID, when the request belongs to a session. */
  sessionId?: string;
  identity: Identity;
  /** The workload name (used by authz, audit and webhooks). */
  serverName: string;
  transport: ClientTransportKind;
  clientAddress: string;
  /** Request headers as received (read-only for policies). */
  headers: IncomingHttpHeaders;
}

/** What a policy decides about a message coming from the client. */
export type ClientVerdict =
  | { action: 'forward'; message: JsonRpcMessage }
  | {
      action: 'reject';
      /** HTTP status for the rejection (403 for a denial, 400 for bad input, ...). */
      httpStatus: number;
      error: JsonRpcError;
    };

/**
 * A message middleware. Every hook is optional; a pipeline with no policies lets bytes pass
 * without a JSON parse. Hooks run in order for client messages and in reverse order for
 * server messages.
 */
export interface MessagePolicy {
  readonly name: string;
  /** A message from the client (request, notification, or a response to a server request). */
  onClientMessage?(message: JsonRpcMessage, ctx: MessageContext): ClientVerdict | Promise<ClientVerdict>;
  /** The server's response to a client request (e.g. filter or rename tools in tools/list). */
  onServerResponse?(
    response: JsonRpcResponse,
    request: JsonRpcRequest,
    ctx: MessageContext,
  ): JsonRpcResponse | Promise<JsonRpcResponse>;
}

// ---------------------------------------------------------------------------------------------
// Backends: what the proxy forwards to.

/** A stdio MCP server's pipes: newline-delimited JSON-RPC on stdin/stdout. */
export interface StdioPipes {
  stdin: Writable;
  stdout: Readable;
  /** Ends the attachment (not necessarily the server). */
  close(): void;
}

export type BackendSpec =
  /** A streamable-HTTP or SSE server (container target or remote URL). */
  | { kind: 'http'; url: string; transport: 'streamable-http' | 'sse'; remote: boolean }
  /** A stdio server; `connect` is called again to re-attach after the pipes end. */
  | { kind: 'stdio'; connect(): Promise<StdioPipes> };

// ---------------------------------------------------------------------------------------------
// The HTTP edge hands each accepted request to middlewares and then to a transport handler.

/** What the pipeline learned about the request's MCP message, for audit and telemetry. */
export interface RequestAnnotations {
  method?: string;
  /** Tool, prompt or resource the request targets (tools/call name, resources/read uri, ...). */
  target?: string;
  id?: JsonRpcId;
  /** Set when a policy rejected the message (e.g. 'authz', 'tool-filter', 'webhook'). */
  deniedBy?: string;
  /** JSON-RPC error code of the final response, when it was an error. */
  rpcErrorCode?: number;
}

export interface EdgeRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** Who is calling; the synthetic local user until an authentication middleware replaces it. */
  identity: Identity;
  clientAddress: string;
  /** Base URL clients reach this proxy at, honoring X-Forwarded-* only when they are trusted. */
  externalBaseUrl: string;
  /** Reads the whole body, enforcing the size limit (413) and read timeout (408). Cached after the first call. */
  readBody(): Promise<Buffer>;
  annotations: RequestAnnotations;
}

/** Around-style middleware at the edge (authentication, audit, ...); call next() to continue. */
export type EdgeMiddleware = (request: EdgeRequest, next: () => Promise<void>) => Promise<void>;

/** Serves the MCP endpoints for one backend (the stdio bridge, or the HTTP forwarder). */
export interface TransportHandler {
  handle(request: EdgeRequest): Promise<void>;
  close(): Promise<void>;
}

/** Credentials for requests to a remote/HTTP backend (bearer, OAuth, token exchange, headers). */
export interface UpstreamAuth {
  /** Headers to set on an upstream request made on behalf of this caller. */
  headers(identity: Identity): Promise<Record<string, string>>;
  /**
   * Called on an upstream 401, or a 403 with an `insufficient_scope` challenge (scope step-up);
   * resolves true when new credentials were obtained and the request may be retried once.
   */
  onUnauthorized?(wwwAuthenticate: string | undefined): Promise<boolean>;
}
