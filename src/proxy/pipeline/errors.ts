/**
 * How the proxy refuses a request: an HTTP status plus a JSON-RPC error body, so MCP clients can
 * show the reason. Thrown as a ProxyRejection anywhere below the edge; the edge writes it.
 */
import type { ServerResponse } from 'node:http';
import { RPC, type JsonRpcError, type JsonRpcId } from '../../mcp/jsonrpc.js';

export class ProxyRejection extends Error {
  readonly httpStatus: number;
  readonly rpcError: JsonRpcError;
  /** The id of the request being refused, when known. */
  readonly id: JsonRpcId | null;
  /** Extra response headers (e.g. `Allow` on a 405). */
  readonly headers: Record<string, string>;
  /** The check that refused the request, for audit (`ExchangeRecord.deniedBy`), when it is a denial. */
  readonly deniedBy: string | undefined;

  constructor(
    httpStatus: number,
    rpcError: JsonRpcError,
    options: { id?: JsonRpcId | null; headers?: Record<string, string>; deniedBy?: string } = {},
  ) {
    super(rpcError.message);
    this.name = 'ProxyRejection';
    this.httpStatus = httpStatus;
    this.rpcError = rpcError;
    this.id = options.id ?? null;
    this.headers = options.headers ?? {};
    this.deniedBy = options.deniedBy;
  }
}

/** Shorthand for the common case: a status, a JSON-RPC code and a message. */
export function reject(
  httpStatus: number,
  code: number,
  message: string,
  options: {
    id?: JsonRpcId | null;
    headers?: Record<string, string>;
    data?: unknown;
    deniedBy?: string;
  } = {},
): ProxyRejection {
  const error: JsonRpcError =
    options.data === undefined ? { code, message } : { code, message, data: options.data };
  return new ProxyRejection(httpStatus, error, options);
}

/** The JSON text of a JSON-RPC error response. */
export function rpcErrorBody(error: JsonRpcError, id: JsonRpcId | null = null): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}

/**
 * Writes a JSON-RPC error response with the given HTTP status. Does nothing when the response
 * has already started (the client then sees the stream end).
 */
export function writeJsonRpcError(
  res: ServerResponse,
  httpStatus: number,
  error: JsonRpcError,
  id: JsonRpcId | null = null,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = rpcErrorBody(error, id);
  res.writeHead(httpStatus, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function writeRejection(res: ServerResponse, rejection: ProxyRejection): void {
  writeJsonRpcError(res, rejection.httpStatus, rejection.rpcError, rejection.id, rejection.headers);
}

/** `Session not found` (404, -32001): unknown, expired or deleted session. */
export function sessionNotFound(id: JsonRpcId | null = null): ProxyRejection {
  return reject(404, RPC.sessionNotFound, 'Session not found', { id });
}
