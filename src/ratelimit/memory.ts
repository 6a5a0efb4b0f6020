/** Token buckets in this process's memory: one proxy replica, or limits per replica. */
import {
  refill,
  waitFor,
  type BucketLimit,
  type BucketState,
  type BucketStore,
  type TakeResult,
} from './buckets.js';

export interface MemoryBucketsOptions {
  /** Most buckets held at once (default 100 000); full buckets are dropped first. */
  maxBuckets?: number;
  now?: () => number;
}

export class MemoryBuckets implements BucketStore {
  readonly #buckets = new Map<string, BucketState & BucketLimit>();
  readonly #maxBuckets: number;
  readonly #now: () => number;

  constructor(options: MemoryBucketsOptions = {}) {
    this.#maxBuckets = options.maxBuckets ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#buckets.size;
  }

  take(limits: readonly BucketLimit[]): Promise<TakeResult> {
    const now = this.#now();
    const tokens = limits.map((limit) => refill(this.#buckets.get(limit.key), limit, now));
    const short = limits.filter((_, i) => (tokens[i] ?? 0) < 1);
    const taken = short.length === 0 ? 1 : 0;
    limits.forEach((limit, i) => this.#set(limit, (tokens[i] ?? 0) - taken, now));
    if (taken) return Promise.resolve({ allowed: true });
    const retryAfterMs = Math.max(
      ...short.map((limit) => waitFor(tokens[limits.indexOf(limit)] ?? 0, limit)),
    );
    return Promise.resolve({ allowed: false, retryAfterMs });
  }

  close(): Promise<void> {
    this.#buckets.clear();
    return Promise.resolve();
  }

  #set(limit: BucketLimit, tokens: number, at: number): void {
    this.#buckets.delete(limit.key);
    if (this.#buckets.size >= this.#maxBuckets) this.#makeRoom(at);
    this.#buckets.set(limit.key, { ...limit, tokens, at });
  }

  /** Drops buckets that have refilled (forgetting them changes nothing), else the oldest one. */
  #makeRoom(now: number): void {
    for (const [key, state] of this.#buckets) {
      if (refill(state, state, now) >= state.capacity) this.#buckets.delete(key);
    }
    const oldest = this.#buckets.keys().next();
    if (this.#buckets.size >= this.#maxBuckets && !oldest.done) this.#buckets.delete(oldest.value);
  }
}
