/**
 * The aggregator (issue 32): a group of workloads served as one MCP endpoint. A plain stateful
 * streamable-HTTP MCP server (2025 revisions) on loopback, which Moat's proxy fronts like any HTTP
 * backend (authentication, policies, audit and both eras for clients are the proxy's). It reaches
 * every member through the member's own proxy, merges their lists under the naming strategy
 * (names.ts), routes each request to its member (session.ts), and follows the member set as it
 * changes (members.ts), telling every client when lists change.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { AggregateNaming } from '../config/aggregate.js';
import type { MemberResolver } from '../mcp/members.js';
import { DEFAULTS } from '../config/defaults.js';
import { log } from '../util/log.js';
import type { Catalog } from './catalog.js';
import { sessionEventStore } from './events.js';
import { MemberIndex } from './member-index.js';
import { MemberWatch } from './members.js';
import type { NameClaims, ShadowedEntry } from './names.js';
import { FrontSession, type ListKind, type SessionHooks } from './session.js';
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
  });
  const hooks: SessionHooks = {
    naming: options.naming,
    claims,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
    available: () => watch.available,
    onCatalog,
    onListChanged: (kind: ListKind) => {
      for (const session of sessions()) session.listChanged(kind);
    },
  };

  const openSession = async (req: IncomingMessage, res: ServerResponse) => {
    const session = new FrontSession(hooks);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Resumable, as its members are: priming events, a retry hint, Last-Event-ID replays.
      eventStore: sessionEventStore(),
      retryInterval: RETRY_INTERVAL_MS,
      onsessioninitialized: (id) => void tracked.set(id, { session, open: 0, lastSeen: Date.now() }),
    });
    session.server.onclose = () => {
      if (transport.sessionId) tracked.delete(transport.sessionId);
      void session.close();
    };
    await session.server.connect(transport);
    await transport.handleRequest(req, res);
    // Not an initialize, or one that failed: nothing to keep.
    if (!transport.sessionId) await session.close();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://aggregate').pathname;
    if (path !== '/mcp') return jsonRpcError(res, 404, -32600, 'not found: the aggregate serves /mcp');
    const id = req.headers['mcp-session-id'];
    if (id === undefined) {
      if (req.method !== 'POST')
        return jsonRpcError(res, 405, -32000, 'Method not allowed without a session');
      return openSession(req, res);
    }
    const entry = typeof id === 'string' ? tracked.get(id) : undefined;
    if (!entry) return jsonRpcError(res, 404, -32001, 'Session not found');
    entry.open++;
    entry.lastSeen = Date.now();
    res.once('close', () => {
      entry.open--;
      entry.lastSeen = Date.now();
    });
    await (entry.session.server.transport as NodeStreamableHTTPServerTransport).handleRequest(req, res);
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
      await Promise.all(sessions().map((s) => s.close()));
      tracked.clear();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
