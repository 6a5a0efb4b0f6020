/**
 * The members as the aggregate's 2026-07-28 face sees them: which speak 2026-07-28 (asked once per
 * member URL with `server/discover`; a member's Moat proxy always does, bridging a 2025 server
 * itself), one stateless SDK client per member for its lists, and the merged catalog those lists
 * make — under the same name claims as the session face, so a name is the same in both eras.
 */
import type { Client } from '@modelcontextprotocol/client';
import type { AggregateNaming } from '../config/aggregate.js';
import { isResponse, tryParseJsonRpc, type JsonRpcMessage } from '../mcp/jsonrpc.js';
import { discoverProbe, STATELESS_REVISION } from '../mcp/revisions.js';
import { SseParser } from '../mcp/sse.js';
import { log } from '../util/log.js';
import { withTimeout } from '../util/timeout.js';
import { Catalog } from './catalog.js';
import { CONNECT_TIMEOUT_MS, connectMember, fetchLists, memberError } from './member-client.js';
import type { MemberSet } from './members.js';
import type { NameClaims } from './names.js';

export interface StatelessMembersOptions {
  naming?: AggregateNaming;
  claims: NameClaims;
  available: () => MemberSet;
  onCatalog: (catalog: Catalog) => void;
}

/** How long a request waits for a member's era to be known before going on without it. */
const ERA_WAIT_MS = 2_000;

const DISCOVER = discoverProbe('moat-aggregate-discover', { name: 'moat-aggregate', version: '1.0.0' });

/** The messages of a JSON or SSE answer body. */
function messagesIn(type: string | null, text: string): JsonRpcMessage[] {
  if (!type?.startsWith('text/event-stream')) {
    const one = tryParseJsonRpc(text);
    return one ? [one] : [];
  }
  const parser = new SseParser();
  return [...parser.push(text), parser.flush()].flatMap((e) => {
    const message = e.data === undefined ? undefined : tryParseJsonRpc(e.data);
    return message ? [message] : [];
  });
}

/**
 * Whether the server at `url` names 2026-07-28 in `server/discover`: true or false from its
 * answer, undefined when it could not be asked (unreachable: ask again next time).
 */
async function speaksStateless(url: string): Promise<boolean | undefined> {
  let text: string;
  let type: string | null;
  try {
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': STATELESS_REVISION,
        'mcp-method': DISCOVER.method,
      },
      body: JSON.stringify(DISCOVER),
      signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    });
    type = answer.headers.get('content-type');
    text = await answer.text();
  } catch {
    return undefined;
  }
  const response = messagesIn(type, text).find((m) => isResponse(m) && m.id === DISCOVER.id);
  const versions = (response && 'result' in response ? response.result : undefined) as
    { supportedVersions?: unknown } | undefined;
  return (
    Array.isArray(versions?.supportedVersions) && versions.supportedVersions.includes(STATELESS_REVISION)
  );
}

export class StatelessMembers {
  /** Member URL → whether it speaks 2026-07-28 (only answers are kept). */
  private readonly eras = new Map<string, boolean>();
  /** Member URL → its `server/discover` under way (one at a time per member). */
  private readonly asking = new Map<string, Promise<boolean | undefined>>();
  private readonly clients = new Map<string, Promise<Client>>();
  private cached: Promise<Catalog> | undefined;

  constructor(private readonly options: StatelessMembersOptions) {}

  /** The first available member that does not speak 2026-07-28, if any (members that could not be asked do not count). */
  async sessionOnlyMember(): Promise<string | undefined> {
    const members = [...this.options.available()];
    const answers = await Promise.all(members.map(([, url]) => this.era(url)));
    return members.find((_, i) => answers[i] === false)?.[0];
  }

  /**
   * Whether the member at `url` speaks 2026-07-28, asked once; a member that has not answered
   * within ERA_WAIT_MS counts as unknown for this request (and is still being asked).
   */
  private async era(url: string): Promise<boolean | undefined> {
    const known = this.eras.get(url);
    if (known !== undefined) return known;
    let pending = this.asking.get(url);
    if (!pending) {
      pending = speaksStateless(url).then((asked) => {
        this.asking.delete(url);
        if (asked !== undefined) this.eras.set(url, asked);
        return asked;
      });
      this.asking.set(url, pending);
    }
    return withTimeout(pending, ERA_WAIT_MS, 'server/discover').catch(() => undefined);
  }

  /** The merged catalog: as built last, or built now when `fresh` or nothing is kept. */
  catalog(fresh = false): Promise<Catalog> {
    if (this.cached && !fresh) return this.cached;
    const building = this.build();
    const mine = building.then((b) => b.catalog);
    this.cached = mine;
    // A build that missed a member (or failed) is used once, not kept.
    void building.then(
      (b) => {
        if (!b.complete && this.cached === mine) this.cached = undefined;
      },
      () => {
        if (this.cached === mine) this.cached = undefined;
      },
    );
    return mine;
  }

  /** Something changed (a list, the member set): the next use builds the catalog again. */
  invalidate(now?: MemberSet): void {
    this.cached = undefined;
    if (!now) return;
    for (const [url, client] of this.clients) {
      if ([...now.values()].includes(url)) continue;
      this.clients.delete(url);
      this.eras.delete(url);
      void client.then((c) => c.close()).catch(() => {});
    }
  }

  async close(): Promise<void> {
    const clients = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(clients.map(async (c) => (await c).close()));
  }

  private client(url: string): Promise<Client> {
    let client = this.clients.get(url);
    if (!client) {
      client = connectMember(url, {}, () => {}, STATELESS_REVISION);
      this.clients.set(url, client);
      client.catch(() => {
        if (this.clients.get(url) === client) this.clients.delete(url);
      });
    }
    return client;
  }

  private async build(): Promise<{ catalog: Catalog; complete: boolean }> {
    const members = [...this.options.available()];
    const results = await Promise.allSettled(
      members.map(async ([name, url]) => fetchLists(name, await this.client(url))),
    );
    const lists = results.flatMap((r, i) => {
      if (r.status === 'fulfilled') return [r.value];
      const [name, url] = members[i]!;
      this.clients.delete(url);
      log().warn(
        { member: name, err: memberError(name, r.reason).message.slice(0, 200) },
        'aggregate: member lists unavailable (2026-07-28)',
      );
      return [];
    });
    const catalog = new Catalog(lists, this.options.naming, this.options.claims);
    this.options.onCatalog(catalog);
    return { catalog, complete: lists.length === members.length };
  }
}
