/**
 * Requests to the HTTP backend (undici keep-alive pools, one per origin): which client headers go
 * upstream, which upstream headers come back, outbound credentials, and one retry after an
 * upstream 401 when new ones were obtained.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { HttpBackend } from '../types.js';
import { reject } from '../pipeline/errors.js';
import { errorMessage } from '../../util/errors.js';
import { createPool, exchange, type UpstreamExchange, type UpstreamPool } from './undici-pool.js';
import type { UpstreamAuth } from '../../auth/outbound/types.js';
import type { Identity } from '../../mcp/identity.js';
import { RPC } from '../../mcp/jsonrpc.js';
import { connectionNamed, FORWARDING_HEADERS } from '../edge/http-rules.js';

/** Never copied from the client: hop-by-hop, the client's own credentials, and headers we set. */
const REQUEST_DROP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-length',
  'authorization',
  'cookie',
  'origin',
  ...FORWARDING_HEADERS,
  'accept-encoding',
  'mcp-session-id',
]);

/**
 * Never passed from the backend to the client: hop-by-hop headers (RFC 9110 §7.6.1, and the
 * proxy-only ones a proxy must not forward), the backend's session id (the client gets the proxy's)
 * and challenges (the proxy authenticates its clients itself), cookies, and two headers about the
 * transport of the origin the client sees, which is Moat's and not the backend's: `Alt-Svc` would
 * send the client to another endpoint for Moat's origin (around the proxy), and
 * `Strict-Transport-Security` would pin HTTPS on Moat's host name and its subdomains for as long as
 * the backend likes. Their owner is whoever terminates TLS in front of Moat.
 */
const RESPONSE_DROP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'mcp-session-id',
  'www-authenticate',
  // The client's cookies are never sent upstream, so the backend's are of no use to it.
  'set-cookie',
  'alt-svc',
  'strict-transport-security',
]);

export interface ForwardContext {
  remote: boolean;
  clientAddress: string;
  externalBaseUrl: string;
}

/** The headers of the upstream request, before session and credential headers are added. */
export function upstreamHeaders(incoming: IncomingHttpHeaders, ctx: ForwardContext): Record<string, string> {
  const out: Record<string, string> = {};
  // Hop-by-hop by the client's say-so (RFC 9110 §7.6.1); the edge refused any the proxy relies on.
  const hopByHop = connectionNamed(incoming.connection);
  // for-in over Node's lower-cased header object: no entries array per request.
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || REQUEST_DROP.has(name) || hopByHop.includes(name)) continue;
    out[name] = typeof value === 'string' ? value : value.join(', ');
  }
  // Identity encoding: responses may need parsing, and keep-alive comments go into the byte stream.
  out['accept-encoding'] = 'identity';
  if (!ctx.remote) {
    // externalBaseUrl is `<proto>://<host>[<prefix>]` (built by the edge).
    const schemeEnd = ctx.externalBaseUrl.indexOf('://');
    const hostEnd = ctx.externalBaseUrl.indexOf('/', schemeEnd + 3);
    out['x-forwarded-for'] = ctx.clientAddress;
    out['x-forwarded-host'] = ctx.externalBaseUrl.slice(schemeEnd + 3, hostEnd === -1 ? undefined : hostEnd);
    out['x-forwarded-proto'] = ctx.externalBaseUrl.slice(0, schemeEnd);
  }
  return out;
}

/** The upstream response headers to pass to the client (RESPONSE_DROP and what Connection names removed). */
export function clientHeaders(upstream: IncomingHttpHeaders, dropLength: boolean): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  // Hop-by-hop by the backend's say-so, as for the client's request (usually none: no allocation).
  const hopByHop = connectionNamed(upstream.connection);
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || RESPONSE_DROP.has(name) || hopByHop.includes(name)) continue;
    // A body the proxy rewrites goes out in the clear and with another length.
    if (dropLength && (name === 'content-length' || name === 'content-encoding')) continue;
    out[name] = value;
  }
  return out;
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Backend URL → its origin, parsed once per backend (parsing a URL per request is measurable). */
const backendOrigins = new Map<string, string>();

function originOf(url: string): string {
  let origin = backendOrigins.get(url);
  if (origin === undefined) {
    origin = new URL(url).origin;
    if (backendOrigins.size < 64) backendOrigins.set(url, origin);
  }
  return origin;
}

/** The path and query of a request target; an absolute-form or `//host/...` target never picks the host. */
function pathAndQuery(requestUrl: string): string {
  if (requestUrl.startsWith('/') && !requestUrl.startsWith('//')) return requestUrl;
  const parsed = new URL(requestUrl, 'http://request.invalid');
  return parsed.pathname + parsed.search;
}

/**
 * Where a client request goes upstream: always the backend's origin. Containers keep the
 * client's path and query; remote URLs replace the path and add the client's query.
 */
export function upstreamUrl(backend: HttpBackend, requestUrl: string): string {
  if (!backend.remote) return originOf(backend.url) + pathAndQuery(requestUrl);
  const target = new URL(backend.url);
  const q = requestUrl.indexOf('?');
  const clientQuery = q === -1 ? '' : requestUrl.slice(q + 1);
  if (clientQuery) target.search = target.search ? `${target.search}&${clientQuery}` : `?${clientQuery}`;
  return target.href;
}

export interface UpstreamRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  identity: Identity;
  signal: AbortSignal;
}

/** The backend's answer: consume `body` (or use `whole` when it was read already), or `discard()` it. */
export type UpstreamResponse = UpstreamExchange;

const MAX_REDIRECTS = 5;
/** A proxy talks to one backend origin (a few with redirects); more than this is a bug, not load. */
const MAX_POOLS = 16;

export class UpstreamClient {
  readonly #pools = new Map<string, UpstreamPool>();
  readonly #auth: UpstreamAuth | undefined;
  #lastOrigin: { origin: string; pool: UpstreamPool } | undefined;

  constructor(auth: UpstreamAuth | undefined) {
    this.#auth = auth;
  }

  /**
   * One async step for the usual exchange (no credentials to add, an answer that is not a redirect
   * or a challenge): this is on every request's path, so the rarer steps are separate functions.
   */
  async send(req: UpstreamRequest): Promise<UpstreamResponse> {
    const headers = this.#auth ? await this.#withCredentials(req) : req.headers;
    let response: UpstreamResponse;
    try {
      response = await this.#dispatch(req, headers);
    } catch (err) {
      throw failure(req, err);
    }
    const status = response.statusCode;
    if (status < 300 || (status > 399 && status !== 401 && status !== 403)) return response;
    return this.#afterChallenge(req, await this.#afterRedirects(req, response));
  }

  /** A 401, or a 403 insufficient_scope step-up challenge: new credentials may help, once. */
  async #afterChallenge(req: UpstreamRequest, response: UpstreamResponse): Promise<UpstreamResponse> {
    const challenge = headerValue(response.headers, 'www-authenticate');
    const stepUp = response.statusCode === 403 && /insufficient_scope/.test(challenge ?? '');
    if ((response.statusCode === 401 || stepUp) && this.#auth?.onUnauthorized) {
      await drain(response.body);
      if (!(await this.#auth.onUnauthorized(challenge))) return unauthorized(stepUp ? 403 : 401);
      response = await this.#afterRedirects(req, await this.#once(req, await this.#withCredentials(req)));
    }
    if (response.statusCode === 401) {
      await drain(response.body);
      return unauthorized();
    }
    return response;
  }

  /**
   * Follows 307/308 redirects within the backend's origin (method and body kept), a few times.
   * Any other redirect is refused: passing it on would send the client around the proxy.
   */
  async #afterRedirects(req: UpstreamRequest, first: UpstreamResponse): Promise<UpstreamResponse> {
    let current = req;
    let response = first;
    for (let hop = 0; ; hop++) {
      if (response.statusCode < 300 || response.statusCode > 399 || response.statusCode === 304)
        return response;
      const location = headerValue(response.headers, 'location');
      await drain(response.body);
      const target = location === undefined ? undefined : new URL(location, current.url);
      const sameOrigin = target !== undefined && target.origin === new URL(current.url).origin;
      if (
        !sameOrigin ||
        (response.statusCode !== 307 && response.statusCode !== 308) ||
        hop >= MAX_REDIRECTS
      ) {
        throw reject(
          502,
          RPC.serverError,
          `The MCP backend answered with a redirect (HTTP ${response.statusCode}) the proxy does not follow`,
        );
      }
      current = { ...current, url: target.href };
      response = await this.#once(
        current,
        this.#auth ? await this.#withCredentials(current) : current.headers,
      );
    }
  }

  async #withCredentials(req: UpstreamRequest): Promise<Record<string, string>> {
    return { ...req.headers, ...(await this.#auth?.headers(req.identity)) };
  }

  async #once(req: UpstreamRequest, headers: Record<string, string>): Promise<UpstreamResponse> {
    try {
      return await this.#dispatch(req, headers);
    } catch (err) {
      throw failure(req, err);
    }
  }

  #dispatch(req: UpstreamRequest, headers: Record<string, string>): Promise<UpstreamResponse> {
    const { url, method, body, signal } = req;
    // The backend's origin again (the usual case): its pool without splitting the URL or a lookup.
    const last = this.#lastOrigin;
    if (last !== undefined && url.startsWith(last.origin) && url.charCodeAt(last.origin.length) === 0x2f) {
      return exchange(last.pool, { path: url.slice(last.origin.length), method, headers, body, signal });
    }
    const { origin, path } = splitUrl(url);
    const pool = this.#pool(origin);
    this.#lastOrigin = { origin, pool };
    return exchange(pool, { path, method, headers, body, signal });
  }

  #pool(origin: string): UpstreamPool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      if (this.#pools.size >= MAX_POOLS) throw new Error(`too many backend origins (${MAX_POOLS})`);
      pool = createPool(new URL(origin).origin);
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  /** Whether the backend answers HTTP at all (any status below 500); never reads a stream's body. */
  async probe(
    url: string,
  ): Promise<{ reachable: boolean; latency_ms?: number; error?: string; checked_at: string }> {
    const started = Date.now();
    const checked_at = new Date(started).toISOString();
    try {
      const headers = { accept: 'application/json, text/event-stream' };
      const { origin, path } = splitUrl(url);
      const signal = AbortSignal.timeout(3000);
      const response = await exchange(this.#pool(origin), { path, method: 'GET', headers, signal });
      discard(response.body);
      const latency_ms = Date.now() - started;
      if (response.statusCode >= 500) {
        return { reachable: false, latency_ms, error: `HTTP ${response.statusCode}`, checked_at };
      }
      return { reachable: true, latency_ms, checked_at };
    } catch (err) {
      return { reachable: false, error: errorMessage(err), checked_at };
    }
  }

  /** Closes every upstream connection (open streams included). */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    this.#lastOrigin = undefined;
    await Promise.all(pools.map((pool) => pool.destroy()));
  }
}

/** `scheme://host[:port]` and the path of an absolute URL (no URL parse: this is on every request's path). */
function splitUrl(url: string): { origin: string; path: string } {
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  return slash === -1 ? { origin: url, path: '/' } : { origin: url.slice(0, slash), path: url.slice(slash) };
}

/** A failed exchange is a 502, unless the caller aborted it: that reason (the client went away, an UpstreamTimeout) is theirs to map. */
function failure(req: UpstreamRequest, err: unknown): Error {
  if (req.signal.aborted) return req.signal.reason as Error;
  return reject(502, RPC.serverError, `MCP backend unavailable: ${errorMessage(err)}`);
}

/** Drops a response body without reading it. */
export function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** Reads a short body to its end, so the connection can be reused. */
function drain(body: Readable): Promise<void> {
  return new Promise((resolve) => {
    body.once('end', resolve);
    body.once('error', () => resolve());
    body.resume();
  });
}

/** The largest answer that is not a stream the proxy reads (it reads such answers whole). */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** The whole body of a response (read already for small answers). */
export function wholeBody(response: UpstreamResponse): Promise<Buffer> {
  return response.whole ? Promise.resolve(response.whole) : readAll(response.body);
}

/** Reads a body to its end (events rather than an async iterator: this is on every request's path). */
function readAll(body: Readable): Promise<Buffer> {
  return new Promise((resolve, rejectRead) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
      else body.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
    });
    body.once('error', rejectRead);
    body.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    // Destroyed before its end (e.g. the connection was reset): no 'end' will come.
    body.once('close', () => {
      if (!body.readableEnded) rejectRead(new Error('the MCP backend closed the response before its end'));
    });
  });
}

/**
 * The backend refused the proxy's credentials. The client cannot fix that (its own token is
 * never forwarded), so it gets a 502 rather than a challenge for the backend's authorization server.
 */
function unauthorized(status = 401): never {
  throw reject(502, RPC.serverError, `The MCP backend refused the proxy's credentials (HTTP ${status})`);
}
