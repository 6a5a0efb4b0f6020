/**
 * A stand-in for the official MCP Registry, answering as its OpenAPI document (2025-12-01)
 * defines: `GET /v0.1/servers` with cursor pagination (at most 3 servers a page, so a listing
 * spans several pages), `search` (name substring, case-insensitive), `version` (`latest` or
 * exact), `updated_since` and `include_deleted` (deleted entries hidden unless asked for or
 * `updated_since` is given); `…/versions` and `…/versions/{version|latest}`; ETags. Every answer
 * is checked against the spec before it is sent and every request's query against the declared
 * parameters: a mismatch is recorded in `problems` (tests expect none) and answered 500/400.
 *
 * `mode` makes it misbehave for the bad-input tests: `loop` repeats one cursor forever, `huge`
 * pads a page past 8 MiB, `slow` never answers, `html` answers a web page.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerProblems, undeclaredParameters } from './registry-api-spec.js';

export type FixtureMode = 'normal' | 'loop' | 'huge' | 'slow' | 'html';
type Status = 'active' | 'deprecated' | 'deleted';

interface FixtureVersion {
  name: string;
  version: string;
  status: Status;
  statusMessage?: string;
  isLatest: boolean;
  publishedAt: string;
  packages?: unknown[];
  remotes?: unknown[];
}

const OFFICIAL = 'io.modelcontextprotocol.registry/official';

function npm(identifier: string, version: string): unknown[] {
  return [{ registryType: 'npm', identifier, version, transport: { type: 'stdio' } }];
}

function version(
  name: string,
  v: string,
  status: Status,
  isLatest: boolean,
  day: number,
  extra: Partial<FixtureVersion> = {},
): FixtureVersion {
  const published = `2026-10-${String(day).padStart(2, '0')}T10:00:00Z`;
  return {
    name,
    version: v,
    status,
    isLatest,
    publishedAt: published,
    packages: npm(`@fixture/${name.split('/')[1]}`, v),
    ...extra,
  };
}

/** The fixture's registry: several versions, each status, and one entry Moat cannot use. */
export const FIXTURE_VERSIONS: FixtureVersion[] = [
  version('io.fixture/alpha', '1.0.0', 'active', false, 1),
  version('io.fixture/alpha', '1.1.0', 'active', true, 2),
  // A real npm package, so that `moat run beta` builds and runs (with the deprecation warning).
  version('io.fixture/beta', '2.0.0', 'deprecated', true, 3, {
    statusMessage: 'use io.fixture/delta',
    packages: npm('@modelcontextprotocol/server-everything', '2026.8.31'),
  }),
  version('io.fixture/delta', '1.0.0', 'active', true, 4),
  version('io.fixture/epsilon', '1.0.0', 'active', true, 5),
  version('io.fixture/eta', '1.0.0', 'active', true, 6),
  version('io.fixture/gone', '1.0.0', 'deleted', true, 7, { statusMessage: 'withdrawn' }),
  version('io.fixture/mixed', '1.0.0', 'active', false, 8),
  version('io.fixture/mixed', '2.0.0', 'deprecated', true, 9, { statusMessage: 'broken release' }),
  version('io.fixture/templated', '1.0.0', 'active', true, 10, {
    packages: undefined,
    remotes: [
      { type: 'streamable-http', url: '{base_url}/mcp', variables: { base_url: { isRequired: true } } },
    ],
  }),
  version('io.fixture/theta', '1.0.0', 'active', true, 11),
  version('io.fixture/zeta', '1.0.0', 'active', true, 12),
];

const PAGE_SIZE = 3;
const LOOP_CURSOR = 'the-same-cursor';

function response(v: FixtureVersion): unknown {
  return {
    server: {
      $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
      name: v.name,
      description: `Fixture server ${v.name.split('/')[1]}`,
      version: v.version,
      ...(v.packages ? { packages: v.packages } : {}),
      ...(v.remotes ? { remotes: v.remotes } : {}),
    },
    _meta: {
      [OFFICIAL]: {
        status: v.status,
        ...(v.statusMessage ? { statusMessage: v.statusMessage } : {}),
        publishedAt: v.publishedAt,
        updatedAt: v.publishedAt,
        isLatest: v.isLatest,
      },
    },
  };
}

const cursorOf = (v: FixtureVersion) => Buffer.from(`${v.name}:${v.version}`).toString('base64url');

export interface RegistryApiFixture {
  url: string;
  /** Every request's path and query, in order. */
  requests: Array<{ url: string; headers: IncomingMessage['headers'] }>;
  /** Spec mismatches seen (tests expect none). */
  problems: string[];
  mode: FixtureMode;
  close(): Promise<void>;
}

type Answer = { status: number; body: unknown };

function list(query: URLSearchParams): Answer {
  const includeDeleted = query.get('include_deleted') === 'true' || query.has('updated_since');
  const search = query.get('search')?.toLowerCase();
  const wanted = query.get('version');
  const since = query.get('updated_since');
  const limit = Math.min(Number(query.get('limit') ?? 30), PAGE_SIZE);
  const matching = FIXTURE_VERSIONS.filter(
    (v) =>
      (includeDeleted || v.status !== 'deleted') &&
      (search === undefined || v.name.toLowerCase().includes(search)) &&
      (wanted === null || (wanted === 'latest' ? v.isLatest : v.version === wanted)) &&
      (since === null || Date.parse(v.publishedAt) >= Date.parse(since)),
  );
  // `loop` mode hands out this cursor on every page; it means "from the start".
  const cursor = query.get('cursor') === LOOP_CURSOR ? null : query.get('cursor');
  const start = cursor ? matching.findIndex((v) => cursorOf(v) === cursor) + 1 : 0;
  if (cursor && start === 0) return { status: 400, body: { error: 'Invalid cursor parameter' } };
  const page = matching.slice(start, start + limit);
  const last = page.at(-1);
  const more = start + limit < matching.length && last !== undefined;
  return {
    status: 200,
    body: {
      servers: page.map(response),
      metadata: { count: page.length, ...(more ? { nextCursor: cursorOf(last) } : {}) },
    },
  };
}

function versions(name: string, wanted: string | undefined, includeDeleted: boolean): Answer {
  const all = FIXTURE_VERSIONS.filter((v) => v.name === name && (includeDeleted || v.status !== 'deleted'));
  if (all.length === 0) return { status: 404, body: { error: 'Server not found' } };
  if (wanted === undefined) {
    const newestFirst = [...all].sort((a, b) => b.publishedAt.localeCompare(a.publishedAt));
    return { status: 200, body: { servers: newestFirst.map(response), metadata: { count: all.length } } };
  }
  const one = all.find((v) => (wanted === 'latest' ? v.isLatest : v.version === wanted));
  return one ? { status: 200, body: response(one) } : { status: 404, body: { error: 'Server not found' } };
}

function route(url: URL): Answer {
  if (url.pathname === '/v0.1/servers') return list(url.searchParams);
  const match = /^\/v0\.1\/servers\/([^/]+)\/versions(?:\/([^/]+))?$/.exec(url.pathname);
  if (!match) return { status: 404, body: { error: 'Not found' } };
  const version = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
  return versions(
    decodeURIComponent(match[1] as string),
    version,
    url.searchParams.get('include_deleted') === 'true',
  );
}

export async function startRegistryApiFixture(mode: FixtureMode = 'normal'): Promise<RegistryApiFixture> {
  const requests: RegistryApiFixture['requests'] = [];
  const problems: string[] = [];
  const fixture = { requests, problems, mode } as RegistryApiFixture;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fixture');
    requests.push({ url: `${url.pathname}${url.search}`, headers: req.headers });
    if (fixture.mode === 'slow') return; // never answers; the client's time limit ends it
    if (fixture.mode === 'html') {
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><body>Welcome</body></html>');
    }
    const undeclared = undeclaredParameters(url);
    if (undeclared.length > 0) {
      problems.push(`${url.pathname}: undeclared query parameters ${undeclared.join(', ')}`);
      return void res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":"undeclared parameter"}');
    }
    const answer = route(url);
    if (fixture.mode === 'loop' && answer.status === 200 && url.pathname === '/v0.1/servers') {
      (answer.body as { metadata: { nextCursor?: string } }).metadata.nextCursor = LOOP_CURSOR;
    }
    if (fixture.mode === 'huge' && answer.status === 200) {
      (answer.body as Record<string, unknown>).padding = 'x'.repeat(9 * 1024 * 1024);
    }
    const found = answer.status === 200 || answer.status === 404;
    const mismatch = found ? answerProblems(url.pathname, answer.status, answer.body) : [];
    if (mismatch.length > 0) {
      problems.push(`${url.pathname} ${answer.status}: ${mismatch.join('; ')}`);
      return void res.writeHead(500).end();
    }
    const body = JSON.stringify(answer.body);
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    if (answer.status === 200 && req.headers['if-none-match'] === etag)
      return void res.writeHead(304, { etag }).end();
    res.writeHead(answer.status, { 'content-type': 'application/json', etag }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fixture.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fixture.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return fixture;
}
