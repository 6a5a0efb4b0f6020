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

/**
 * Headers that say who is calling, where the request goes, or how its body is framed: two of one
 * is refused, because Node keeps the first (or joins them) and a front proxy keeping the last would
 * disagree about the caller or the session. Keyed by the name's length, so the one pass over the
 * raw headers lower-cases only names that could be one of these.
 */
const SINGLETONS: ReadonlyMap<number, readonly string[]> = new Map([
  [4, ['Host']],
  [12, ['Content-Type']],
  [13, ['Authorization']],
  [14, ['Content-Length', 'Mcp-Session-Id']],
  [20, ['MCP-Protocol-Version']],
]);

/** The first singleton header the request carries twice or more, with its count, if any. */
function repeatedSingleton(raw: readonly string[]): { name: string; count: number } | undefined {
  let seen: string[] | undefined;
  let repeated: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const candidates = SINGLETONS.get(name.length);
    if (candidates === undefined) continue;
    const lower = name.toLowerCase();
    const canonical = candidates.find((c) => c.toLowerCase() === lower);
    if (canonical === undefined) continue;
    if (seen?.includes(canonical)) {
      repeated ??= canonical;
    } else {
      (seen ??= []).push(canonical);
    }
  }
  if (repeated === undefined) return undefined;
  const lower = repeated.toLowerCase();
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === lower) count++;
  return { name: repeated, count };
}

/** Methods the edge serves (GET streams and health, POST messages, DELETE sessions, CORS preflight). */
const SERVED_METHODS = new Set(['GET', 'POST', 'DELETE', 'OPTIONS', 'HEAD']);

/** The Allow header of a 405: what an MCP endpoint accepts. */
export const ALLOWED_METHODS = 'GET, POST, DELETE';

function methodNotAllowedMessage(method: string): string {
  return `Method not allowed: ${method} (an MCP endpoint accepts ${ALLOWED_METHODS})`;
}

/** Throws a 400 or 405 ProxyRejection when the request breaks a rule above. */
export function checkHttpRules(req: IncomingMessage): void {
  const method = req.method ?? 'GET';
  if (!SERVED_METHODS.has(method)) {
    throw reject(405, RPC.invalidRequest, methodNotAllowedMessage(method), {
      headers: { allow: ALLOWED_METHODS },
    });
  }
  if (req.headers.host === undefined && req.httpVersion !== '1.0') {
    throw reject(400, RPC.invalidRequest, 'Bad request: expected exactly one Host header, got 0');
  }
  const repeated = repeatedSingleton(req.rawHeaders);
  if (repeated !== undefined) {
    throw reject(
      400,
      RPC.invalidRequest,
      `Bad request: the ${repeated.name} header was sent ${repeated.count} times; it may be sent once`,
    );
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

/** Status, reason phrase, message and extra head lines for an error Node's HTTP parser or timers raised. */
function clientErrorAnswer(err: NodeJS.ErrnoException & { reason?: string }): RawAnswer {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', message: 'Request headers too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        reason: 'Request Timeout',
        message: 'Request not received within the proxy read timeout',
      };
    case 'HPE_INVALID_METHOD':
      // A method Node's parser does not know at all: the same answer as one it knows and the edge does not serve.
      return methodNotAllowed('this method');
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      if (err.reason === 'Duplicate Content-Length') {
        return {
          status: 400,
          reason: 'Bad Request',
          message: 'Bad request: the Content-Length header was sent more than once; it may be sent once',
        };
      }
      return { status: 400, reason: 'Bad Request', message: 'Bad request: the HTTP request is malformed' };
    default:
      return { status: 400, reason: 'Bad Request', message: 'Bad request: the HTTP request is malformed' };
  }
}

interface RawAnswer {
  status: number;
  reason: string;
  message: string;
  allow?: string;
}

function methodNotAllowed(method: string): RawAnswer {
  return {
    status: 405,
    reason: 'Method Not Allowed',
    message: methodNotAllowedMessage(method),
    allow: ALLOWED_METHODS,
  };
}

/** Writes an answer with a JSON-RPC error body straight to the socket, then closes it. */
function endWith(socket: Duplex, answer: RawAnswer): void {
  const code = answer.status === 408 ? RPC.serverError : RPC.invalidRequest;
  const body = rpcErrorBody({ code, message: answer.message });
  const allow = answer.allow === undefined ? '' : `allow: ${answer.allow}\r\n`;
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\n${allow}content-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Answers a connection Node's parser refused (the server's `clientError` event), then closes it. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset, or a response already under way (e.g. a 413 being drained): nothing more can be said.
  const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || current?.headersSent === true) {
    socket.destroy();
    return;
  }
  endWith(socket, clientErrorAnswer(err));
}

/**
 * Answers a CONNECT (the server's `connect` event; without a listener Node closes the socket
 * without a byte) with the 405 every other unserved method gets, then closes: nothing is tunnelled.
 */
export function answerConnect(req: IncomingMessage, socket: Duplex): void {
  endWith(socket, methodNotAllowed(req.method ?? 'CONNECT'));
}
