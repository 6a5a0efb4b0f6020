/**
 * Token buckets in Redis, shared by every proxy replica: one Lua script takes from all of a
 * message's buckets atomically, on Redis's own clock (replicas' clocks never matter). Each
 * bucket is a hash {tokens, at} that expires once it would be full again.
 */
import { withTimeout } from '../util/timeout.js';
import type { BucketLimit, BucketStore, TakeResult } from './buckets.js';

/** Runs a Lua script (the Redis client's EVAL); injected so this layer needs no Redis client. */
export type EvalScript = (script: string, keys: string[], args: string[]) => Promise<unknown>;

const TAKE_ALL = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
local tokens = {}
local wait = 0
for i = 1, n do
  local capacity = tonumber(ARGV[2 * i - 1])
  local rate = tonumber(ARGV[2 * i])
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local have = tonumber(state[1])
  local at = tonumber(state[2])
  if have == nil or at == nil then
    have = capacity
  else
    have = math.min(capacity, have + math.max(0, now - at) * rate)
  end
  tokens[i] = have
  if have < 1 then wait = math.max(wait, math.ceil((1 - have) / rate)) end
end
local taken = 0
if wait == 0 then taken = 1 end
for i = 1, n do
  local capacity = tonumber(ARGV[2 * i - 1])
  local rate = tonumber(ARGV[2 * i])
  local left = tokens[i] - taken
  redis.call('HSET', KEYS[i], 'tokens', tostring(left), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[i], math.ceil((capacity - left) / rate) + 1000)
end
return wait
`;

export interface RedisBucketsOptions {
  eval: EvalScript;
  /** Prefix of every bucket key. */
  prefix: string;
  /** Bound on one script call (`session_redis.command_timeout`); no answer in time is a store failure. */
  timeoutMs: number;
  close?: () => Promise<void>;
}

export class RedisBuckets implements BucketStore {
  constructor(private readonly options: RedisBucketsOptions) {}

  async take(limits: readonly BucketLimit[]): Promise<TakeResult> {
    const keys = limits.map((l) => this.options.prefix + l.key);
    const args = limits.flatMap((l) => [String(l.capacity), String(l.refillPerMs)]);
    const wait = Number(
      await withTimeout(this.options.eval(TAKE_ALL, keys, args), this.options.timeoutMs, 'Redis'),
    );
    if (!Number.isFinite(wait)) throw new Error('the rate limit script answered something unexpected');
    return wait <= 0 ? { allowed: true } : { allowed: false, retryAfterMs: wait };
  }

  async close(): Promise<void> {
    await this.options.close?.();
  }
}
