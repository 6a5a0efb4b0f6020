/**
 * The live member set: every refresh reads the caller's `members()` and keeps those that say they
 * serve and whose port accepts a connection. A TCP probe, not an MCP ping, so watching costs the
 * members no sessions and no audit lines; a member that hangs is still bounded by request timeouts.
 */
import { connect } from 'node:net';
import { log } from '../util/log.js';
import type { AggregateMember } from './types.js';

/** Member name → its proxy URL, for the members available now. */
export type MemberSet = ReadonlyMap<string, string>;

const PROBE_TIMEOUT_MS = 2_000;

function probe(url: string): Promise<boolean> {
  const target = new URL(url);
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function sameSet(a: MemberSet, b: MemberSet): boolean {
  return a.size === b.size && [...a].every(([name, url]) => b.get(name) === url);
}

export class MemberWatch {
  private current: MemberSet = new Map();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly members: () => Promise<AggregateMember[]>,
    private readonly refreshMs: number,
    private readonly onChange: (now: MemberSet, before: MemberSet) => void,
  ) {}

  get available(): MemberSet {
    return this.current;
  }

  /** Reads the set once now, then every refreshMs. */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.refresh().finally(() => this.schedule());
    }, this.refreshMs);
    this.timer.unref();
  }

  async refresh(): Promise<void> {
    let listed: AggregateMember[];
    try {
      listed = await this.members();
    } catch (err) {
      log().warn({ err: String(err) }, 'aggregate: reading the members failed; keeping the last set');
      return;
    }
    const healthy = listed.filter((m) => m.healthy);
    const reachable = await Promise.all(healthy.map((m) => probe(m.url)));
    const next = new Map<string, string>();
    healthy.forEach((m, i) => {
      if (reachable[i]) next.set(m.name, m.url);
    });
    if (this.closed || sameSet(next, this.current)) return;
    const before = this.current;
    this.current = next;
    for (const [name, url] of next)
      if (before.get(name) !== url) log().info({ member: name }, 'aggregate: member available');
    for (const name of before.keys())
      if (!next.has(name)) log().warn({ member: name }, 'aggregate: member withdrawn');
    this.onChange(next, before);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
