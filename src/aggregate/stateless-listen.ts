/**
 * `subscriptions/listen` on the aggregate (2026-07-28): one stream to the client, fed by a listen
 * at each member (the list kinds it asked for, and the resource URIs that member serves) and by
 * the aggregate itself, which says a list changed when members join or leave. Notifications keep
 * the client's request id as their `subscriptionId`: each member's listen is sent with that id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import {
  isNotification,
  tryParseJsonRpc,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../mcp/jsonrpc.js';
import { META } from '../mcp/revisions.js';
import { SseParser } from '../mcp/sse.js';
import { isObject } from '../util/is-object.js';
import type { Catalog } from './catalog.js';
import type { MemberSet } from './members.js';
import type { ListKind } from './session.js';
import { withTimeout } from '../util/timeout.js';
import { CONNECT_TIMEOUT_MS } from './member-client.js';
import { sendToMember } from './stateless-wire.js';

/** A comment on an idle client stream this often (the proxy's own keep-alive interval). */
const KEEP_ALIVE_MS = 25_000;

export interface ListenFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

const KIND_FLAG: Record<ListKind, 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged'> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};

/** The client's filter (the aggregate offers every kind), or undefined when it is missing or malformed. */
export function listenFilter(request: JsonRpcRequest): ListenFilter | undefined {
  const wanted = request.params?.notifications;
  if (!isObject(wanted)) return undefined;
  const uris = wanted.resourceSubscriptions;
  if (uris !== undefined && (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')))
    return undefined;
  const filter: ListenFilter = {};
  for (const flag of Object.values(KIND_FLAG)) if (wanted[flag] === true) filter[flag] = true;
  if (Array.isArray(uris) && uris.length > 0) filter.resourceSubscriptions = [...uris];
  return filter;
}

export interface ListenDeps {
  agent: Dispatcher;
  catalog: () => Promise<Catalog>;
  available: () => MemberSet;
  /** A member said one of its lists changed. */
  onListChanged: (kind: ListKind) => void;
}

export class MergedListen {
  /** Member name → its listen (URL, and what ends it). */
  private readonly streams = new Map<string, { url: string; stop: AbortController }>();
  private readonly pending = new Set<ListKind>();
  private keepAlive: NodeJS.Timeout | undefined;
  private closed = false;
  /** Resolves when the client's stream ends. */
  readonly done: Promise<void>;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly request: JsonRpcRequest,
    private readonly filter: ListenFilter,
    private readonly deps: ListenDeps,
  ) {
    this.done = new Promise((resolve) => res.once('close', resolve));
    res.once('close', () => this.stop());
  }

  /** Opens the member listens, then the client's stream: once it sees the acknowledgement, every member listens. */
  async start(): Promise<void> {
    await this.follow(this.deps.available());
    if (this.closed) return;
    this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    this.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: this.filter },
    });
    // An idle stream still shows it is alive (the member listens' own comments end here).
    this.keepAlive = setInterval(() => {
      if (!this.res.destroyed) this.res.write(':\n\n');
    }, KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  /** Members joined or left: their lists are withdrawn or added, and the member listens follow. */
  async membersChanged(now: MemberSet): Promise<void> {
    for (const kind of Object.keys(KIND_FLAG) as ListKind[]) this.listChanged(kind);
    await this.follow(now);
  }

  /** Tells the client a list changed (once per burst, and only a kind it asked for). */
  listChanged(kind: ListKind): void {
    if (this.closed || !this.filter[KIND_FLAG[kind]] || this.pending.has(kind)) return;
    this.pending.add(kind);
    setImmediate(() => {
      this.pending.delete(kind);
      this.send({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed`, params: {} });
    });
  }

  /** Ends the stream with the result that closes a listen (the aggregate is stopping). */
  finish(): void {
    if (this.closed) return;
    const result = { resultType: 'complete', _meta: { [META.subscriptionId]: this.request.id } };
    this.res.end(this.event({ jsonrpc: '2.0', id: this.request.id, result }));
    this.stop();
  }

  private stop(): void {
    this.closed = true;
    clearInterval(this.keepAlive);
    for (const stream of this.streams.values()) stream.stop.abort();
    this.streams.clear();
  }

  /** Opens a listen at each member not yet followed, ends those at members gone or moved. */
  private async follow(now: MemberSet): Promise<void> {
    for (const [name, stream] of this.streams) {
      if (now.get(name) === stream.url) continue;
      stream.stop.abort();
      this.streams.delete(name);
    }
    const joined = [...now].filter(([name]) => !this.streams.has(name));
    if (joined.length === 0 || this.closed) return;
    const owners = await this.resourceOwners();
    const acknowledged: Array<Promise<void>> = [];
    for (const [name, url] of joined) {
      const filter = this.memberFilter(name, owners);
      if (Object.keys(filter).length === 0 || this.closed) continue;
      const stop = new AbortController();
      this.streams.set(name, { url, stop });
      acknowledged.push(new Promise((ready) => void this.relay(name, url, filter, stop.signal, ready)));
    }
    await withTimeout(Promise.all(acknowledged), CONNECT_TIMEOUT_MS, 'member listens').catch(() => {});
  }

  /** URI → the member serving it; a URI no member lists (or no catalog) is asked of every member. */
  private async resourceOwners(): Promise<Map<string, string | undefined>> {
    const owners = new Map<string, string | undefined>();
    const uris = this.filter.resourceSubscriptions ?? [];
    if (uris.length === 0) return owners;
    const catalog = await this.deps.catalog().catch(() => undefined);
    for (const uri of uris) {
      let owner: string | undefined;
      try {
        owner = catalog?.resourceOwner(uri);
      } catch {
        owner = undefined;
      }
      owners.set(uri, owner);
    }
    return owners;
  }

  private memberFilter(member: string, owners: Map<string, string | undefined>): ListenFilter {
    const { resourceSubscriptions: _all, ...lists } = this.filter;
    const uris = [...owners].filter(([, owner]) => owner === undefined || owner === member).map(([u]) => u);
    return uris.length > 0 ? { ...lists, resourceSubscriptions: uris } : lists;
  }

  /** Reads one member's listen until it or the client's stream ends; `ready` once it acknowledged (or failed). */
  private async relay(
    member: string,
    url: string,
    filter: ListenFilter,
    signal: AbortSignal,
    ready: () => void,
  ): Promise<void> {
    const message = { ...this.request, params: { ...this.request.params, notifications: filter } };
    try {
      const upstream = await sendToMember(this.req, { agent: this.deps.agent, url, message, signal });
      if (upstream.statusCode !== 200) return void (await upstream.body.dump());
      const parser = new SseParser();
      for await (const chunk of upstream.body) {
        for (const event of parser.push(chunk)) {
          const received = event.data === undefined ? undefined : tryParseJsonRpc(event.data);
          if (received && isNotification(received)) this.fromMember(received);
          ready();
        }
      }
    } catch {
      // The member went away or the stream was ended here: the member set's next change reopens it.
    } finally {
      ready();
      if (this.streams.get(member)?.url === url && !signal.aborted) this.streams.delete(member);
    }
  }

  private fromMember(notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/subscriptions/acknowledged') return;
    const kind = /^notifications\/(tools|prompts|resources)\/list_changed$/.exec(notification.method)?.[1];
    // Every session and listen hears of a member's list change, this one included.
    if (kind) this.deps.onListChanged(kind as ListKind);
    else this.send(notification);
  }

  private event(message: object): string {
    return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
  }

  /** One notification on the client's stream, stamped with the listen's id. */
  private send(notification: JsonRpcNotification): void {
    if (this.closed || this.res.destroyed) return;
    const params = notification.params ?? {};
    const meta = isObject(params._meta) ? params._meta : {};
    const stamped = {
      ...notification,
      params: { ...params, _meta: { ...meta, [META.subscriptionId]: this.request.id } },
    };
    this.res.write(this.event(stamped));
  }
}
