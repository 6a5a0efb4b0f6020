/** Picks the session store the RunConfig asks for: Redis when scaling_config.session_redis is set, else memory. */
import type { Logger } from 'pino';
import { sessionTtlMs } from '../../config/derived.js';
import type { RunConfig } from '../../config/runconfig.js';
import type { SessionStore } from '../types.js';
import { MemorySessionStore } from './memory.js';

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
