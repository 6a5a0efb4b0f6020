/**
 * Replay protection for request states: each round id may be consumed once. Consuming is atomic
 * (set-if-absent), so two retries racing with one state never both pass, on one replica or on
 * two sharing Redis. An entry lives until the state it guards has expired anyway.
 */
import type { RedisClient } from '../../sessions/redis.js';
import { withTimeout } from '../../../util/timeout.js';

export interface SingleUse {
  /** True the first time `id` is consumed; false on every later call before `expiresAt`. */
  consume(id: string, expiresAt: number): Promise<boolean>;
  close(): void;
}

const SWEEP_MS = 60_000;

export class MemorySingleUse implements SingleUse {
  readonly #used = new Map<string, number>();
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.#sweeper.unref();
  }

  consume(id: string, expiresAt: number): Promise<boolean> {
    const until = this.#used.get(id);
    if (until !== undefined && until > this.#now()) return Promise.resolve(false);
    this.#used.set(id, expiresAt);
    return Promise.resolve(true);
  }

  /** Forgets ids whose states have expired (they are refused as expired before this is asked). */
  sweep(): void {
    const now = this.#now();
    for (const [id, until] of this.#used) if (until <= now) this.#used.delete(id);
  }

  get size(): number {
    return this.#used.size;
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.#used.clear();
  }
}

export class RedisSingleUse implements SingleUse {
  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly timeoutMs: number,
  ) {}

  async consume(id: string, expiresAt: number): Promise<boolean> {
    const stored = await withTimeout(
      this.client.set(`${this.prefix}${id}`, '1', {
        condition: 'NX',
        expiration: { type: 'PXAT', value: Math.max(expiresAt, Date.now() + 1000) },
      }),
      this.timeoutMs,
      'Redis',
    );
    return stored !== null;
  }

  close(): void {}
}
