/**
 * `moat registry serve`: the MCP Registry API, read-only, over a fixed list of servers (the
 * built-in catalog and registry files), so a team can point every Moat at one URL. It answers as
 * the official registry does: `GET /v0.1/servers` (also `/v0/…`) with `cursor` (opaque),
 * `limit` (1–100, default 30), `search` (case-insensitive substring of the name), `version`
 * (`latest` or exact) and `updated_since` (RFC 3339); `…/servers/{name}/versions` and
 * `…/versions/{version|latest}`. Every answer has an ETag (a matching If-None-Match gets 304).
 * With a token, every request needs `Authorization: Bearer <token>`, compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OFFICIAL_META } from './api-shape.js';
import type { RegistryServer } from './schema.js';

export const DEFAULT_PAGE_LIMIT = 30;
export const MAX_PAGE_LIMIT = 100;
/** The API requires a version; an entry without one is served as this. */
export const UNVERSIONED = '0.0.0';

export interface RegistryApiOptions {
  servers: readonly RegistryServer[];
  token?: string;
  /** When the entries were loaded: their publishedAt and updatedAt. */
  loadedAt?: Date;
}

export interface RegistryApiServer {
  url: string;
  close(): Promise<void>;
}

type Answer = { status: number; body: unknown };

const notFound = (what: string): Answer => ({ status: 404, body: { error: `${what} not found` } });
const badRequest = (error: string): Answer => ({ status: 400, body: { error } });

/** The handler (also used in tests without a listener). */
export function registryApiHandler(
  options: RegistryApiOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const loadedAt = (options.loadedAt ?? new Date()).toISOString();
  const entries = [...options.servers]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((server) => ({
      server: { ...server, version: server.version ?? UNVERSIONED },
      _meta: {
        [OFFICIAL_META]: { status: 'active', publishedAt: loadedAt, updatedAt: loadedAt, isLatest: true },
      },
    }));
  const tokenDigest = options.token === undefined ? undefined : digest(options.token);

  const list = (query: URLSearchParams): Answer => {
    const limitText = query.get('limit');
    const limit = limitText === null ? DEFAULT_PAGE_LIMIT : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      return badRequest(`limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
    }
    const since = query.get('updated_since');
    if (since !== null && Number.isNaN(Date.parse(since))) {
      return badRequest(
        'Invalid updated_since format: expected RFC3339 timestamp (e.g., 2025-08-07T13:15:04.280Z)',
      );
    }
    const search = query.get('search')?.toLowerCase();
    const version = query.get('version');
    const cursor = query.get('cursor');
    const after = cursor === null || cursor === '' ? undefined : fromCursor(cursor);
    if (after === null) return badRequest('Invalid cursor parameter');
    const matching = entries.filter(
      (e) =>
        (search === undefined || e.server.name.toLowerCase().includes(search)) &&
        (version === null || version === 'latest' || e.server.version === version) &&
        (since === null || Date.parse(loadedAt) > Date.parse(since)) &&
        (after === undefined || e.server.name.localeCompare(after) > 0),
    );
    const page = matching.slice(0, limit);
    const last = page.at(-1);
    const more = matching.length > limit && last !== undefined;
    return {
      status: 200,
      body: {
        servers: page,
        metadata: { count: page.length, ...(more ? { nextCursor: toCursor(last.server.name) } : {}) },
      },
    };
  };

  const versions = (name: string, version: string | undefined): Answer => {
    const entry = entries.find((e) => e.server.name === name);
    if (!entry) return notFound('Server');
    if (version === undefined) return { status: 200, body: { servers: [entry], metadata: { count: 1 } } };
    return version === 'latest' || version === entry.server.version
      ? { status: 200, body: entry }
      : notFound('Server version');
  };

  const route = (req: IncomingMessage): Answer => {
    const url = new URL(req.url ?? '/', 'http://registry');
    if (url.pathname.match(/^\/v0(\.1)?\/servers\/?$/)) return list(url.searchParams);
    const match = /^\/v0(?:\.1)?\/servers\/(.+)\/versions(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (!match) return notFound('Path');
    try {
      const version = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
      return versions(decodeURIComponent(match[1] as string), version);
    } catch {
      return badRequest('Invalid URL encoding');
    }
  };

  return (req, res) => {
    if (tokenDigest && !authorized(req, tokenDigest)) {
      return send(
        req,
        res,
        { status: 401, body: { error: 'a bearer token is required' } },
        { 'www-authenticate': 'Bearer' },
      );
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(
        req,
        res,
        { status: 405, body: { error: 'read-only registry: only GET' } },
        { allow: 'GET, HEAD' },
      );
    }
    send(req, res, route(req));
  };
}

/** Listens on host:port (port 0: a free one). */
export async function serveRegistryApi(
  options: RegistryApiOptions & { host: string; port: number },
): Promise<RegistryApiServer> {
  const server = createServer(registryApiHandler(options));
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  answer: Answer,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(answer.body);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const common = { ...headers, etag, 'cache-control': 'no-cache' };
  if (answer.status === 200 && matchesEtag(req.headers['if-none-match'], etag)) {
    res.writeHead(304, common).end();
    return;
  }
  res.writeHead(answer.status, { ...common, 'content-type': 'application/json' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const match = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
  // Digests have one length, so the comparison takes the same time whatever was sent.
  return match !== null && timingSafeEqual(digest(match[1] as string), expected);
}

function toCursor(name: string): string {
  return Buffer.from(name).toString('base64url');
}

/** The name a cursor stands for; null for one this server did not make. */
function fromCursor(cursor: string): string | null {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  return toCursor(name) === cursor && name !== '' ? name : null;
}
