/**
 * Rate limiting from a RunConfig's `rate_limit`: the message policy with its bucket store, in
 * memory or, when the caller hands one over (the session store's Redis), shared in Redis.
 */
import type { RunConfig } from '../config/runconfig.js';
import type { MessagePolicy } from '../mcp/policy.js';
import { MemoryBuckets } from './memory.js';
import { createRateLimitPolicy } from './policy.js';
import { RedisBuckets, type EvalScript } from './redis.js';

export interface RateLimit {
  policy: MessagePolicy;
  close(): Promise<void>;
}

export interface SharedRedis {
  eval: EvalScript;
  /** Prefix for this workload's bucket keys. */
  prefix: string;
  /** Bound on one Redis call. */
  timeoutMs: number;
  close(): Promise<void>;
}

export function createRateLimit(
  config: Pick<RunConfig, 'rate_limit'>,
  redis?: SharedRedis,
): RateLimit | undefined {
  const settings = config.rate_limit;
  if (
    !settings ||
    (!settings.per_principal && !settings.per_tool && Object.keys(settings.tools ?? {}).length === 0)
  ) {
    return undefined;
  }
  const store = redis ? new RedisBuckets(redis) : new MemoryBuckets();
  return { policy: createRateLimitPolicy(settings, store), close: () => store.close() };
}

export { RATE_LIMIT_POLICY, RATE_LIMITED_CODE } from './policy.js';
