/** Picks the session store the RunConfig asks for: Redis when scaling_config.session_redis is set, else memory. */
import type { Logger } from 'pino';
import { DEFAULTS } from '../../config/defaults.js';
import type { RunConfig } from '../../config/runconfig.js';
import { parseDuration } from '../../util/duration.js';
import { usageError } from '../../util/errors.js';
import type { SessionStore } from '../types.js';
import { MemorySessionStore } from './memory.js';

/** The sliding session TTL in ms from `session_ttl` (Go duration; default 2h). */
export function sessionTtlMs(config: Pick<RunConfig, 'session_ttl'>): number {
  if (config.session_ttl === undefined) return DEFAULTS.sessionTtlMs;
  const ms = parseDuration(config.session_ttl);
  if (ms === undefined || ms <= 0) {
    throw usageError(`session_ttl "${config.session_ttl}" is not a positive duration (e.g. 30m, 2h)`);
  }
  return ms;
}

export async function createSessionStore(
  config: Pick<RunConfig, 'session_ttl' | 'scaling_config'>,
  options: { logger: Logger; env?: NodeJS.ProcessEnv },
): Promise<SessionStore> {
  const ttlMs = sessionTtlMs(config);
  const redis = config.scaling_config?.session_redis;
  if (redis) {
    // Loaded only when configured: the Redis client costs about 25 MB of memory.
    const { RedisSessionStore } = await import('./redis.js');
    return RedisSessionStore.connect(redis, { ttlMs, logger: options.logger, env: options.env });
  }
  return new MemorySessionStore({ ttlMs });
}

export { MemorySessionStore } from './memory.js';
