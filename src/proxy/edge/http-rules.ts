/**
 * HTTP/1.1 rules the edge enforces itself, and the answers to what Node's parser refuses:
 * - exactly one Host header (RFC 9112 §3.2; Node keeps the first of two and requires none);
 * - headers named in Connection are hop-by-hop and dropped before forwarding (RFC 9110 §7.6.1),
 *   but naming one the proxy sets or consumes (credentials, forwarding, session) is an attempt to
 *   strip it at some hop, and is refused;
 * - a parser rejection (malformed or smuggling-shaped request, oversized headers, header timeout)
 *   gets the same JSON-RPC error body as every other refusal.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { reject, rpcErrorBody } from '../pipeline/errors.js';
import { RPC } from '../../mcp/jsonrpc.js';

/** Client headers about where a request came from: never forwarded; the proxy sets its own. */
export const FORWARDING_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-prefix',
];

/** Headers the proxy sets upstream or consumes itself: a Connection header may not name them. */
const PROTECTED = new Set([
  ...FORWARDING_HEADERS,
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'traceparent',
  'tracestate',
  'origin',
]);

const NONE: readonly string[] = Object.freeze([]);

/** The header names a Connection header lists (lower case), without the connection options. */
export function connectionNamed(connection: string | string[] | undefined): readonly string[] {
  // The common cases, on every request: no allocations.
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return NONE;
  const text = Array.isArray(connection) ? connection.join(',') : connection;
  return text
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token !== '' && token !== 'keep-alive' && token !== 'close');
}

function hostCount(req: IncomingMessage): number {
  let count = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    // Length first: no lower-cased copy of every header name per request.
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

/** Throws a 400 ProxyRejection when the request breaks a rule above. */
export function checkHttpRules(req: IncomingMessage): void {
  const hosts = req.headers.host === undefined ? 0 : hostCount(req);
  if (hosts !== 1 && !(hosts === 0 && req.httpVersion === '1.0')) {
    throw reject(400, RPC.invalidRequest, `Bad request: expected exactly one Host header, got ${hosts}`);
  }
  for (const name of connectionNamed(req.headers.connection)) {
    if (PROTECTED.has(name)) {
      throw reject(
        400,
        RPC.invalidRequest,
        `Bad request: the Connection header may not name ${name} (a header the proxy sets or checks)`,
      );
    }
  }
}

/** Status and text for an error Node's HTTP parser or its timers raised on a connection. */
function clientErrorStatus(err: NodeJS.ErrnoException): [status: number, reason: string, message: string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'Request headers too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'Request not received within the proxy read timeout'];
    default:
      return [400, 'Bad Request', 'Bad request: the HTTP request is malformed'];
  }
}

/** Answers a connection Node's parser refused (the server's `clientError` event), then closes it. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset, or a response already under way (e.g. a 413 being drained): nothing more can be said.
  const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || current?.headersSent === true) {
    socket.destroy();
    return;
  }
  const [status, reason, message] = clientErrorStatus(err);
  const body = rpcErrorBody({ code: status === 408 ? RPC.serverError : RPC.invalidRequest, message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
