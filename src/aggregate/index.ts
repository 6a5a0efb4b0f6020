/**
 * The aggregator (issue 32): a group of workloads served as one MCP endpoint. A streamable-HTTP
 * MCP server on loopback, which Moat's proxy fronts like any HTTP backend (authentication,
 * policies and audit are the proxy's). It speaks both eras: 2025 sessions (session.ts, an SDK
 * server per client session) and stateless 2026-07-28 requests (stateless.ts, while every member
 * speaks it). It reaches every member through the member's own proxy, merges their lists under the
 * naming strategy (names.ts), routes each request to its member, and follows the member set as it
 * changes (members.ts), telling every client when lists change.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { AggregateNaming } from '../config/aggregate.js';
import type { MemberResolver } from '../mcp/members.js';
import { DEFAULTS } from '../config/defaults.js';
import { isStatelessRevisionName } from '../mcp/revisions.js';
import { isObject } from '../util/is-object.js';
import { log } from '../util/log.js';
import { UndiciAgent } from '../util/undici-parts.js';
import type { Catalog } from './catalog.js';
import { sessionEventStore } from './events.js';
import { MemberIndex } from './member-index.js';
import { MemberWatch } from './members.js';
import type { NameClaims, ShadowedEntry } from './names.js';
import { FrontSession, type ListKind, type SessionHooks } from './session.js';
import { SessionIds, type SessionSeed } from './session-id.js';
import { StatelessFace } from './stateless.js';
import type { AggregateMember } from './types.js';

export type { ShadowedEntry } from './names.js';
export type { AggregateMember } from './types.js';

export interface AggregatorOptions {
  naming?: AggregateNaming;
  /** Called at start and every refreshMs: members join, leave and turn unhealthy at run time. */
  members: () => Promise<AggregateMember[]>;
  /** Default 2000. */
  refreshMs?: number;
  /** Default 127.0.0.1; the port is picked. */
  host?: string;
  /** Entries per page of a merged list (default 100). */
  pageSize?: number;
  /**
   * A front session with no request and no open stream for this long is ended, with its member
   * sessions (a client that vanished without DELETE). Default: the proxy's session TTL default.
   */
  sessionIdleMs?: number;
  /**
   * Seals front session ids (session-id.ts). Replicas of one aggregate given the same key (at
   * least 16 bytes) serve each other's sessions: one that never saw a session rebuilds it from its
   * id. Default: a random key, so only this aggregator's own ids are valid.
   */
  sessionKey?: string | Uint8Array;
}

/** What the aggregate serves now: its members, its sessions, and the entries conflicts shadowed or renamed. */
export interface AggregateReport {
  members: string[];
  /** Front sessions open now. */
  sessions: number;
  shadowed: ShadowedEntry[];
}

export interface Aggregator {
  /** Its streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp. */
  url: string;
  close(): Promise<void>;
  report(): AggregateReport;
  /** The member behind an exposed name, for the front proxy (its BackendSpec's `memberOf`). */
  memberOf: MemberResolver;
}

const DEFAULT_REFRESH_MS = 2_000;
const DEFAULT_PAGE_SIZE = 100;
/** The SDK transport's own bound on a request body. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Ids of sessions their clients ended here, never rebuilt (the newest this many). */
const MAX_ENDED = 10_000;
/** The `retry` hint on the front's SSE streams: how long a client waits before it resumes one. */
const RETRY_INTERVAL_MS = 1_000;

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

/** A front session and what says it is in use: responses open now, and the last request. */
interface Tracked {
  session: FrontSession;
  open: number;
  lastSeen: number;
}

/** The JSON body of a request, at most MAX_BODY_BYTES; undefined when it is not, answered as the SDK transport would. */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return void jsonRpcError(res, 413, -32000, 'Request body too large');
    chunks.push(chunk);
  }
  try {
    return { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return void jsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
  }
}

/** What an `initialize` request declares, for its session id; undefined for any other body. */
function initializeSeed(body: unknown): SessionSeed | undefined {
  const message = body as {
    method?: unknown;
    params?: { protocolVersion?: unknown; capabilities?: unknown };
  };
  if (message?.method !== 'initialize' || typeof message.params?.protocolVersion !== 'string')
    return undefined;
  const capabilities = message.params.capabilities;
  return {
    protocolVersion: message.params.protocolVersion,
    capabilities: typeof capabilities === 'object' && capabilities !== null ? capabilities : {},
  };
}

/** The web-standard transport inside the Node one, to replay an `initialize` without a socket. */
function webTransport(
  transport: NodeStreamableHTTPServerTransport,
): WebStandardStreamableHTTPServerTransport {
  const inner = (transport as unknown as { _webStandardTransport?: WebStandardStreamableHTTPServerTransport })
    ._webStandardTransport;
  if (!inner)
    throw new Error('the MCP SDK transport has no web-standard transport to replay an initialize on');
  return inner;
}

export async function startAggregator(options: AggregatorOptions): Promise<Aggregator> {
  const tracked = new Map<string, Tracked>();
  const sessions = () => [...tracked.values()].map((t) => t.session);
  const claims: NameClaims = new Map();
  let shadowed: ShadowedEntry[] = [];
  const warned = new Set<string>();

  // Conflicts are never silent: each one is logged once and kept for report().
  const index = new MemberIndex();
  const onCatalog = (catalog: Catalog) => {
    index.update(catalog);
    shadowed = catalog.shadowed;
    for (const s of catalog.shadowed) {
      const key = JSON.stringify(s);
      if (warned.has(key)) continue;
      warned.add(key);
      const outcome = s.exposedAs ? `renamed to ${s.exposedAs}` : 'not exposed';
      log().warn(
        { member: s.member, kind: s.kind, name: s.name, by: s.by, exposedAs: s.exposedAs },
        `aggregate: ${s.kind} ${s.name} of ${s.member} conflicts with ${s.by}'s: ${outcome}`,
      );
    }
  };
  const watch = new MemberWatch(options.members, options.refreshMs ?? DEFAULT_REFRESH_MS, (now) => {
    for (const session of sessions()) session.membersChanged(now);
    stateless.membersChanged(now);
  });
  // Direct tools/calls to members (direct-call.ts): one keep-alive pool per member, for every session.
  const agent = new UndiciAgent();
  const hooks: SessionHooks = {
    agent,
    retryMs: RETRY_INTERVAL_MS,
    naming: options.naming,
    claims,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
    available: () => watch.available,
    onCatalog,
    onListChanged: (kind: ListKind) => {
      for (const session of sessions()) session.listChanged(kind);
      stateless.listChanged(kind);
    },
  };
  const stateless = new StatelessFace(hooks);

  const ids = new SessionIds(options.sessionKey);
  /** Sessions their clients ended (DELETE) here: a replayed id stays ended on this replica. */
  const ended = new Set<string>();
  const rebuilding = new Map<string, Promise<Tracked | undefined>>();

  /** A front session on a transport whose session id is `id` once it is initialized. */
  const createSession = async (id: string | undefined) => {
    const events = sessionEventStore();
    const session = new FrontSession(hooks, events);
    const transport = new NodeStreamableHTTPServerTransport({
      // An initialize openSession did not read as one (it cannot happen) gets an id only this replica knows.
      sessionIdGenerator: () => id ?? randomUUID(),
      // Resumable, as its members are: priming events, a retry hint, Last-Event-ID replays.
      eventStore: events,
      retryInterval: RETRY_INTERVAL_MS,
    });
    session.server.onclose = () => {
      if (transport.sessionId) tracked.delete(transport.sessionId);
      void session.close();
    };
    await session.server.connect(transport);
    return { session, transport };
  };
  const track = (id: string, session: FrontSession): Tracked => {
    const entry = { session, open: 0, lastSeen: Date.now() };
    tracked.set(id, entry);
    return entry;
  };

  const sessionless = async (req: IncomingMessage, res: ServerResponse) => {
    const read = await readJson(req, res);
    if (!read) return;
    const { body } = read;
    // Without a session only `initialize` is a session's (unless sent as 2026-07-28, which has
    // none): anything else is a 2026-07-28 request.
    const version = req.headers['mcp-protocol-version'];
    const statelessHeader = typeof version === 'string' && isStatelessRevisionName(version);
    if ((statelessHeader || !(isObject(body) && body.method === 'initialize')) && (await stateless.serves()))
      return stateless.handle(req, res, body);
    const seed = initializeSeed(body);
    const { session, transport } = await createSession(seed && ids.issue(seed));
    await transport.handleRequest(req, res, body);
    // Not an initialize, or one that failed: nothing to keep.
    if (transport.sessionId) track(transport.sessionId, session);
    else await session.close();
  };

  /**
   * A session another replica began (or this one ended for idleness): rebuilt from its sealed id
   * by replaying the `initialize` it carries. Member sessions are opened anew when needed.
   */
  const rebuild = async (id: string): Promise<Tracked | undefined> => {
    const seed = ids.open(id);
    if (!seed || ended.has(id)) return undefined;
    const { session, transport } = await createSession(id);
    const web = webTransport(transport);
    const replay = async (message: object, headers: Record<string, string> = {}) => {
      const answer = await web.handleRequest(
        new Request('http://aggregate/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...headers,
          },
          body: JSON.stringify(message),
        }),
      );
      await answer.text();
      return answer.ok;
    };
    const initialized =
      (await replay({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { ...seed, clientInfo: { name: 'moat-aggregate-replica', version: '1.0.0' } },
      })) &&
      transport.sessionId === id &&
      (await replay({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id }));
    if (!initialized) {
      await session.close();
      return undefined;
    }
    log().info(
      { session: id.slice(0, 16) },
      'aggregate: session rebuilt from its id (begun on another replica, or ended here while idle)',
    );
    return track(id, session);
  };
  const known = async (id: string): Promise<Tracked | undefined> => {
    const entry = tracked.get(id);
    if (entry) return entry;
    let pending = rebuilding.get(id);
    if (!pending) {
      pending = rebuild(id).finally(() => rebuilding.delete(id));
      rebuilding.set(id, pending);
    }
    return pending;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://aggregate').pathname;
    if (path !== '/mcp') return jsonRpcError(res, 404, -32600, 'not found: the aggregate serves /mcp');
    const id = req.headers['mcp-session-id'];
    if (id === undefined) {
      if (req.method !== 'POST')
        return jsonRpcError(res, 405, -32000, 'Method not allowed without a session');
      return sessionless(req, res);
    }
    const entry = typeof id === 'string' ? await known(id) : undefined;
    if (!entry || typeof id !== 'string') return jsonRpcError(res, 404, -32001, 'Session not found');
    entry.open++;
    entry.lastSeen = Date.now();
    res.once('close', () => {
      entry.open--;
      entry.lastSeen = Date.now();
    });
    const transport = entry.session.server.transport as NodeStreamableHTTPServerTransport;
    if (req.method === 'POST') {
      // Read here so the direct path (direct-call.ts) can take what it serves; the rest goes to the SDK.
      const read = await readJson(req, res);
      if (read && !(await entry.session.direct.take(req, res, read.body)))
        await transport.handleRequest(req, res, read.body);
      return;
    }
    if (req.method === 'GET' && entry.session.direct.resume(req, res)) return;
    await transport.handleRequest(req, res);
    if (req.method === 'DELETE' && res.statusCode < 300) {
      ended.add(id);
      if (ended.size > MAX_ENDED) ended.delete(ended.values().next().value as string);
    }
  };

  const idleMs = options.sessionIdleMs ?? DEFAULTS.sessionTtlMs;
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, entry] of tracked) {
        if (entry.open > 0 || now - entry.lastSeen < idleMs) continue;
        tracked.delete(id);
        void entry.session.close();
      }
    },
    Math.min(Math.max(idleMs / 4, 100), 60_000),
  );
  sweep.unref();

  await watch.start();
  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log().warn({ err: String(err) }, 'aggregate: request failed');
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}/mcp`,
    report: () => ({ members: [...watch.available.keys()], sessions: tracked.size, shadowed: [...shadowed] }),
    memberOf: index.memberOf,
    close: async () => {
      clearInterval(sweep);
      await watch.close();
      await stateless.close();
      await Promise.all(sessions().map((s) => s.close()));
      tracked.clear();
      await agent.destroy();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
