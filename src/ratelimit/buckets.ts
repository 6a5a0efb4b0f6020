/**
 * Token buckets: each key holds up to `capacity` tokens and gains `refillPerMs` tokens per
 * millisecond; a message takes one token from every bucket it counts against, or from none.
 */

export interface BucketLimit {
  /** Opaque, already hashed key (principal, or principal and tool). */
  key: string;
  capacity: number;
  refillPerMs: number;
}

export type TakeResult = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Where buckets live: this process's memory, or Redis shared by every replica. */
export interface BucketStore {
  /** Takes one token from each bucket, all or nothing. */
  take(limits: readonly BucketLimit[]): Promise<TakeResult>;
  close(): Promise<void>;
}

export interface BucketState {
  tokens: number;
  /** When `tokens` was computed (ms). */
  at: number;
}

/** The bucket's tokens at `now`, refilled since it was last computed. */
export function refill(state: BucketState | undefined, limit: BucketLimit, now: number): number {
  if (!state) return limit.capacity;
  return Math.min(limit.capacity, state.tokens + Math.max(0, now - state.at) * limit.refillPerMs);
}

/** How long until a bucket holding `tokens` has one whole token. */
export function waitFor(tokens: number, limit: BucketLimit): number {
  return Math.ceil((1 - tokens) / limit.refillPerMs);
}
