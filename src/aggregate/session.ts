/**
 * One front session of the aggregate: the MCP server its client talks to, and one client per
 * member, opened when first needed and closed with the session. A member session belongs to
 * exactly one front session, so whatever a member asks or says goes back to that front client.
 */
import type { Client, RequestOptions } from '@modelcontextprotocol/client';
import {
  ProtocolError,
  Server,
  type EventStore,
  type LoggingLevel,
  type Notification,
  type Prompt,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import type { Dispatcher } from 'undici';
import type { AggregateNaming } from '../config/aggregate.js';
import { log } from '../util/log.js';
import { withTimeout } from '../util/timeout.js';
import { Catalog } from './catalog.js';
import { DirectCalls, type Related } from './direct-call.js';
import {
  CALL_TIMEOUT_MS,
  CONNECT_TIMEOUT_MS,
  connectMember,
  fetchLists,
  forwardedCapabilities,
  memberError,
  memberSession,
  type MemberSession,
} from './member-client.js';
import type { MemberSet } from './members.js';
import type { NameClaims } from './names.js';

export type ListKind = 'tools' | 'prompts' | 'resources';
export const LIST_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources'];

/** What every session shares, owned by the aggregator. */
export interface SessionHooks {
  naming?: AggregateNaming;
  claims: NameClaims;
  pageSize: number;
  available: () => MemberSet;
  /** A catalog was built (the aggregator reports its conflicts). */
  onCatalog: (catalog: Catalog) => void;
  /** A member said one of its lists changed: every session is told. */
  onListChanged: (kind: ListKind) => void;
  /** Carries direct tools/calls to members (direct-call.ts). */
  agent: Dispatcher;
  /** The `retry` hint on the front's event streams. */
  retryMs: number;
}

interface MemberConnection {
  url: string;
  client: Promise<Client>;
  /** The client once connected. */
  ready?: Client;
  /** Its session for direct tools/calls, made at the first (null on the legacy transport). */
  session?: MemberSession | null;
}

const INTERNAL_ERROR = -32603;
/** How long closing one member session may take (its DELETE). */
const CLOSE_TIMEOUT_MS = 2_000;

/** A front request's params for the member: its progress token stays here (the member gets its own). */
function forwardParams<P extends { _meta?: Record<string, unknown> }>(params: P): P {
  if (!params._meta || !('progressToken' in params._meta)) return params;
  const { progressToken: _dropped, ...meta } = params._meta;
  return { ...params, _meta: meta };
}

/** Ends one member session, waiting at most CLOSE_TIMEOUT_MS; a member that is gone is not an error. */
const closeBounded = (client: Client) =>
  withTimeout(closeClient(client), CLOSE_TIMEOUT_MS, 'closing a member session').catch(() => {});

/** Who the aggregate says it is, in both eras. */
export const SERVER_INFO = { name: 'moat-aggregate', version: '1.0.0' };

/** What the aggregate offers, in both eras: everything, whatever its members offer now (they change). */
export const AGGREGATE_CAPABILITIES = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  completions: {},
  logging: {},
};

export class FrontSession {
  readonly server: Server;
  /** tools/call without the SDK on member sessions that are open (the SDK path takes the rest). */
  readonly direct: DirectCalls;
  private readonly connections = new Map<string, MemberConnection>();
  private cached: Promise<Catalog> | undefined;
  /** Front requests now waiting on each member, latest last: what a member asks or logs meanwhile goes on their stream. */
  private readonly inFlight = new Map<string, Related[]>();
  /** URI → the member it was subscribed at: a new session with that member subscribes again. */
  private readonly subscriptions = new Map<string, string>();
  private logLevel: LoggingLevel | undefined;
  private readonly pendingKinds = new Set<ListKind>();
  private closed = false;

  constructor(
    private readonly hooks: SessionHooks,
    events: EventStore,
  ) {
    this.server = new Server(SERVER_INFO, { capabilities: AGGREGATE_CAPABILITIES });
    this.direct = new DirectCalls(
      {
        // A name no member serves is the SDK path's to refuse.
        tool: (name) =>
          this.catalog()
            .then((c) => c.tool(name))
            .then(
              (t) => ({ member: t.member, name: t.name }),
              () => undefined,
            ),
        memberSession: (member) => this.memberSession(member),
        drop: (member) => this.drop(member),
        waiting: (member, related) => this.waiting(member, related),
        clientCapabilities: () => this.server.getClientCapabilities(),
        events,
        agent: hooks.agent,
        retryMs: hooks.retryMs,
      },
      () => this.server.transport?.sessionId,
    );
    this.registerLists();
    this.registerRouted();
    this.server.setNotificationHandler('notifications/roots/list_changed', async () => {
      for (const client of await this.connectedClients()) await client.sendRootsListChanged().catch(() => {});
    });
  }

  private registerLists(): void {
    const s = this.server;
    const size = this.hooks.pageSize;
    s.setRequestHandler('tools/list', async (req) => {
      const { items, nextCursor } = (await this.catalog()).page<Tool>('tools', req.params?.cursor, size);
      return { tools: items, ...(nextCursor && { nextCursor }) };
    });
    s.setRequestHandler('prompts/list', async (req) => {
      const { items, nextCursor } = (await this.catalog()).page<Prompt>('prompts', req.params?.cursor, size);
      return { prompts: items, ...(nextCursor && { nextCursor }) };
    });
    s.setRequestHandler('resources/list', async (req) => {
      const { items, nextCursor } = (await this.catalog()).page<Resource>(
        'resources',
        req.params?.cursor,
        size,
      );
      return { resources: items, ...(nextCursor && { nextCursor }) };
    });
    s.setRequestHandler('resources/templates/list', async (req) => {
      const page = (await this.catalog()).page<ResourceTemplate>(
        'resourceTemplates',
        req.params?.cursor,
        size,
      );
      return { resourceTemplates: page.items, ...(page.nextCursor && { nextCursor: page.nextCursor }) };
    });
  }

  private registerRouted(): void {
    const s = this.server;
    s.setRequestHandler('tools/call', async (req, ctx) => {
      const tool = (await this.catalog()).tool(req.params.name);
      const params = { ...forwardParams(req.params), name: tool.name };
      return this.routed(tool.member, ctx, (c, o) => c.request({ method: 'tools/call', params }, o));
    });
    s.setRequestHandler('prompts/get', async (req, ctx) => {
      const prompt = (await this.catalog()).prompt(req.params.name);
      const params = { ...forwardParams(req.params), name: prompt.name };
      return this.routed(prompt.member, ctx, (c, o) => c.request({ method: 'prompts/get', params }, o));
    });
    s.setRequestHandler('resources/read', async (req, ctx) => {
      const member = (await this.catalog()).resourceOwner(req.params.uri);
      const params = forwardParams(req.params);
      return this.routed(member, ctx, (c, o) => c.request({ method: 'resources/read', params }, o));
    });
    s.setRequestHandler('resources/subscribe', async (req, ctx) => {
      const member = (await this.catalog()).resourceOwner(req.params.uri);
      const params = forwardParams(req.params);
      const answer = await this.routed(member, ctx, (c, o) =>
        c.request({ method: 'resources/subscribe', params }, o),
      );
      this.subscriptions.set(req.params.uri, member);
      return answer;
    });
    s.setRequestHandler('resources/unsubscribe', async (req, ctx) => {
      this.subscriptions.delete(req.params.uri);
      const member = (await this.catalog()).resourceOwner(req.params.uri);
      const params = forwardParams(req.params);
      return this.routed(member, ctx, (c, o) => c.request({ method: 'resources/unsubscribe', params }, o));
    });
    s.setRequestHandler('completion/complete', async (req, ctx) => {
      const catalog = await this.catalog();
      const { ref } = req.params;
      let member: string;
      let params = forwardParams(req.params);
      if (ref.type === 'ref/prompt') {
        const prompt = catalog.prompt(ref.name);
        member = prompt.member;
        params = { ...params, ref: { ...ref, name: prompt.name } };
      } else {
        member = catalog.templateOwner(ref.uri);
      }
      return this.routed(member, ctx, (c, o) => c.request({ method: 'completion/complete', params }, o));
    });
    // Every member gets the level (and those connected later too); the SDK's own handler only filters locally.
    s.removeRequestHandler('logging/setLevel');
    s.setRequestHandler('logging/setLevel', async (req) => {
      this.logLevel = req.params.level;
      for (const client of await this.connectedClients()) {
        if (client.getServerCapabilities()?.logging)
          await client.setLoggingLevel(req.params.level).catch(() => {});
      }
      return {};
    });
  }

  /** Runs one front request at a member: the front's cancellation, progress token and a bound go with it. */
  private async routed<T>(
    member: string,
    ctx: ServerContext,
    call: (client: Client, options: RequestOptions) => Promise<T>,
  ): Promise<T> {
    const done = this.waiting(member, {
      send: (request, o) => ctx.mcpReq.send(request, o),
      notify: (notification) => ctx.mcpReq.notify(notification),
    });
    const options: RequestOptions = { signal: ctx.mcpReq.signal, timeout: CALL_TIMEOUT_MS };
    const token = ctx.mcpReq._meta?.progressToken;
    if (token !== undefined) {
      options.onprogress = (progress) =>
        void ctx.mcpReq
          .notify({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
          .catch(() => {});
    }
    try {
      return await call(await this.member(member), options);
    } catch (err) {
      if (!sessionGone(err)) throw memberError(member, err);
      // The member forgot the session (it restarted): the request never ran there, so once more on a new one.
      this.drop(member);
      return await call(await this.member(member), options).catch((again: unknown) => {
        throw memberError(member, again);
      });
    } finally {
      done();
    }
  }

  /** Marks a front request as waiting on `member` until the returned function is called. */
  private waiting(member: string, related: Related): () => void {
    const waiting = this.inFlight.get(member) ?? [];
    waiting.push(related);
    this.inFlight.set(member, waiting);
    return () => void waiting.splice(waiting.indexOf(related), 1);
  }

  /** The front request waiting on `member` most recently, if any. */
  private relatedRequest(member: string): Related | undefined {
    return this.inFlight.get(member)?.at(-1);
  }

  private member(name: string): Promise<Client> {
    if (this.closed)
      return Promise.reject(new ProtocolError(INTERNAL_ERROR, 'the aggregate session is closed'));
    const url = this.hooks.available().get(name);
    if (!url)
      return Promise.reject(new ProtocolError(INTERNAL_ERROR, `aggregate member ${name} is not available`));
    const known = this.connections.get(name);
    if (known?.url === url) return known.client;
    if (known) this.drop(name);
    const capabilities = forwardedCapabilities(this.server.getClientCapabilities());
    const client = connectMember(url, capabilities, (c) => this.wire(name, c)).then(async (c) => {
      // What this session asked of the member before carries over to a new member session.
      if (this.logLevel && c.getServerCapabilities()?.logging)
        await c.setLoggingLevel(this.logLevel).catch(() => {});
      for (const [uri, owner] of this.subscriptions) {
        if (owner !== name) continue;
        const options = { timeout: CONNECT_TIMEOUT_MS };
        await c.request({ method: 'resources/subscribe', params: { uri } }, options).catch(() => {});
      }
      return c;
    });
    const connection: MemberConnection = { url, client };
    this.connections.set(name, connection);
    void client.then(
      (c) => (connection.ready = c),
      () => {},
    );
    // A failed connect is tried again next time.
    client.catch(() => {
      if (this.connections.get(name) === connection) this.connections.delete(name);
    });
    return client;
  }

  /** The open session with `name` for a direct call, if it is current (a stale one takes the SDK path, which replaces it). */
  private memberSession(name: string): MemberSession | undefined {
    const connection = this.connections.get(name);
    if (this.closed || !connection?.ready || this.hooks.available().get(name) !== connection.url)
      return undefined;
    connection.session ??= memberSession(connection.url, connection.ready) ?? null;
    return connection.session ?? undefined;
  }

  /** What a member sends of its own accord reaches this session's client. */
  private wire(member: string, client: Client): void {
    for (const kind of LIST_KINDS) {
      client.setNotificationHandler(`notifications/${kind}/list_changed`, () =>
        this.hooks.onListChanged(kind),
      );
    }
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      if (this.subscriptions.has(n.params.uri))
        void this.server.sendResourceUpdated(n.params).catch(() => {});
    });
    client.setNotificationHandler('notifications/message', (n) => this.relayNotification(member, n));
    const front = this.server.getClientCapabilities();
    const forward = (method: 'sampling/createMessage' | 'elicitation/create' | 'roots/list') =>
      client.setRequestHandler(method, (req, cctx) => {
        const options = { signal: cctx.mcpReq.signal, timeout: CALL_TIMEOUT_MS };
        const request = { method, params: req.params };
        const related = this.relatedRequest(member);
        // On the stream of the front request that caused it, else the session's own stream.
        return related ? related.send(request, options) : this.server.request(request, options);
      });
    if (front?.sampling) forward('sampling/createMessage');
    if (front?.elicitation) forward('elicitation/create');
    if (front?.roots) forward('roots/list');
    // A member session that ends (the member restarted, its stream is gone) is opened again when next needed.
    client.onclose = () => {
      const known = this.connections.get(member);
      // A connect that failed is forgotten where it was started (`member()`).
      known?.client.then(
        (c) => {
          if (c === client && this.connections.get(member) === known) this.connections.delete(member);
        },
        () => {},
      );
    };
  }

  private relayNotification(member: string, notification: Notification): void {
    const related = this.relatedRequest(member);
    void (related ? related.notify(notification) : this.server.notification(notification)).catch(() => {});
  }

  private async connectedClients(): Promise<Client[]> {
    const settled = await Promise.allSettled([...this.connections.values()].map((c) => c.client));
    return settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  }

  /** The merged lists, built once until something changes; a build that missed a member is not kept. */
  catalog(): Promise<Catalog> {
    if (this.cached) return this.cached;
    const building = this.build();
    this.cached = building.then((b) => b.catalog);
    const mine = this.cached;
    void building.then(
      (b) => {
        if (!b.complete && this.cached === mine) this.cached = undefined;
      },
      () => {
        if (this.cached === mine) this.cached = undefined;
      },
    );
    return this.cached;
  }

  private async build(): Promise<{ catalog: Catalog; complete: boolean }> {
    const names = [...this.hooks.available().keys()];
    const results = await Promise.allSettled(
      names.map(async (name) => fetchLists(name, await this.member(name))),
    );
    const lists = results.flatMap((r, i) => {
      if (r.status === 'fulfilled') return [r.value];
      if (sessionGone(r.reason)) this.drop(names[i]!);
      log().warn(
        { member: names[i], err: memberError(names[i]!, r.reason).message.slice(0, 200) },
        'aggregate: member lists unavailable',
      );
      return [];
    });
    const catalog = new Catalog(lists, this.hooks.naming, this.hooks.claims);
    this.hooks.onCatalog(catalog);
    return { catalog, complete: lists.length === names.length };
  }

  /** A list changed somewhere: forget the catalog and tell the client (once per burst). */
  listChanged(kind: ListKind): void {
    this.cached = undefined;
    if (this.closed || this.pendingKinds.has(kind)) return;
    this.pendingKinds.add(kind);
    setImmediate(() => {
      this.pendingKinds.delete(kind);
      if (this.closed) return;
      const notify =
        kind === 'tools'
          ? this.server.sendToolListChanged()
          : kind === 'prompts'
            ? this.server.sendPromptListChanged()
            : this.server.sendResourceListChanged();
      void notify.catch(() => {});
    });
  }

  /** Members joined, left or moved: member sessions on a stale URL end, every list may have changed. */
  membersChanged(now: MemberSet): void {
    for (const [name, connection] of this.connections) if (now.get(name) !== connection.url) this.drop(name);
    for (const kind of LIST_KINDS) this.listChanged(kind);
  }

  private drop(name: string): void {
    const connection = this.connections.get(name);
    this.connections.delete(name);
    void connection?.client.then(closeBounded).catch(() => {});
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.direct.close();
    const clients = await this.connectedClients();
    this.connections.clear();
    await Promise.all(clients.map(closeBounded));
    await this.server.close().catch(() => {});
  }
}

/** The member answered 404 to its session id: it no longer knows the session (a restart). */
function sessionGone(err: unknown): boolean {
  return (err as { status?: unknown } | undefined)?.status === 404;
}

/** Ends the member session (DELETE on streamable HTTP) and the client. */
async function closeClient(client: Client): Promise<void> {
  const transport = client.transport as { terminateSession?: () => Promise<void> } | undefined;
  await transport?.terminateSession?.().catch(() => {});
  await client.close().catch(() => {});
}
