/**
 * Rate limiting as a message policy: every client message that carries a method (requests and
 * notifications alike, so a notification is no way around it) takes a token from the caller's
 * bucket, and a tools/call also from the bucket of that caller and tool. An empty bucket is a
 * JSON-RPC error with `retryAfter` (seconds) in its data, sent as HTTP 429 with Retry-After.
 * When the bucket store fails the message is refused (503), unless `on_store_failure: allow`.
 */
import { createHash } from 'node:crypto';
import type { Identity } from '../mcp/identity.js';
import { ALLOW, type ClientVerdict, type MessagePolicy } from '../mcp/policy.js';
import type { RateLimitConfig, RateLimitRule } from '../config/runconfig.js';
import { errorMessage } from '../util/errors.js';
import { log } from '../util/log.js';
import type { BucketLimit, BucketStore } from './buckets.js';

export const RATE_LIMIT_POLICY = 'rate-limit';
/** JSON-RPC code of a rate-limit refusal (implementation-defined server error range). */
export const RATE_LIMITED_CODE = -32029;
const STORE_FAILED_CODE = -32603;

const MINUTE_MS = 60_000;

function limit(key: string, rule: RateLimitRule): BucketLimit {
  return {
    key,
    capacity: rule.burst ?? rule.requests_per_minute,
    refillPerMs: rule.requests_per_minute / MINUTE_MS,
  };
}

/** A short, fixed-length key: principals and tool names are caller-chosen text of any length. */
function hashed(...parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 32);
}

function principalKey(identity: Identity): string {
  if (identity.local) return 'local';
  const issuer = typeof identity.claims.iss === 'string' ? identity.claims.iss : '';
  return JSON.stringify([issuer, identity.subject]);
}

export function createRateLimitPolicy(config: RateLimitConfig, store: BucketStore): MessagePolicy {
  const failOpen = config.on_store_failure === 'allow';
  return {
    name: RATE_LIMIT_POLICY,
    async onClientMessage(message, ctx): Promise<ClientVerdict> {
      if (!('method' in message)) return ALLOW;
      const principal = principalKey(ctx.identity);
      const limits: BucketLimit[] = [];
      if (config.per_principal) limits.push(limit(`p:${hashed(principal)}`, config.per_principal));
      const tool = message.method === 'tools/call' ? message.params?.name : undefined;
      const toolRule = typeof tool === 'string' ? (config.tools?.[tool] ?? config.per_tool) : undefined;
      if (typeof tool === 'string' && toolRule) limits.push(limit(`t:${hashed(principal, tool)}`, toolRule));
      if (limits.length === 0) return ALLOW;
      let outcome;
      try {
        outcome = await store.take(limits);
      } catch (err) {
        log().error({ err: errorMessage(err), failOpen }, 'rate limit store failed');
        if (failOpen) return ALLOW;
        return {
          action: 'deny',
          reason: 'unavailable',
          error: { code: STORE_FAILED_CODE, message: 'The rate limit store is unavailable; try again later' },
        };
      }
      if (outcome.allowed) return ALLOW;
      const retryAfter = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
      const what =
        typeof tool === 'string' && toolRule ? `calls of tool ${JSON.stringify(tool)}` : 'requests';
      return {
        action: 'deny',
        reason: 'rate-limited',
        error: {
          code: RATE_LIMITED_CODE,
          message: `Rate limit exceeded for ${what}; retry after ${retryAfter} s`,
          data: { retryAfter },
        },
      };
    },
  };
}
