/**
 * CORS for browser MCP clients on an allowed origin (`--allowed-origins`, or a loopback bind's
 * defaults): preflights are answered here, and responses let the page read the MCP headers. An
 * origin that no allowlist names gets no CORS headers, so the browser keeps responses from it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request headers MCP clients send, both protocol eras, plus credentials and resumption. */
const ALLOW_HEADERS = [
  'accept',
  'authorization',
  'content-type',
  'last-event-id',
  'mcp-method',
  'mcp-name',
  'mcp-protocol-version',
  'mcp-session-id',
].join(', ');

/** Response headers a browser client must be able to read: the session and the auth challenge. */
const EXPOSE_HEADERS = 'mcp-session-id, mcp-protocol-version, www-authenticate';

const PREFLIGHT_MAX_AGE_SECONDS = '600';

export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

/** Marks the response readable by `origin` (an allowed one). */
export function allowOrigin(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
  res.setHeader('vary', 'Origin');
}

/** Answers a preflight from an allowed origin: 204 with what the MCP endpoint accepts. */
export function answerPreflight(res: ServerResponse, stateless: boolean): void {
  res.writeHead(204, {
    'access-control-allow-methods': stateless ? 'POST, OPTIONS' : 'GET, POST, DELETE, OPTIONS',
    'access-control-allow-headers': ALLOW_HEADERS,
    'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
  });
  res.end();
}
