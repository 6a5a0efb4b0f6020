/**
 * Builds the MRTR broker a RunConfig asks for. The state key: without Redis, 32 random bytes made
 * at start (states die with the process, as do the backend requests they continue); with the
 * Redis session store, one key for every replica of the workload, made by whichever replica
 * needs it first (SET NX) and read by the others, so a state sealed by one opens on any. Deleting
 * the key in Redis rotates it (outstanding states are then refused as tampered). Redis is
 * connected on first use: a proxy that never bridges a request never opens those connections.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { redisCommandTimeoutMs, requestStateTtlMs, upstreamTimeoutMs } from '../../../config/derived.js';
import type { RunConfig, SessionRedis } from '../../../config/runconfig.js';
import { errorMessage, runtimeError } from '../../../util/errors.js';
import { withTimeout } from '../../../util/timeout.js';
import type { RedisClient } from '../../sessions/redis.js';
import { MrtrBroker, type StateBacking } from './broker.js';
import type { RoundRelay } from './relay.js';
import { MemorySingleUse, RedisSingleUse } from './single-use.js';
import { RequestStateCodec, STATE_KEY_BYTES } from './state.js';

export { MrtrBroker } from './broker.js';

export interface Mrtr {
  broker: MrtrBroker;
  /**
   * The hand-over between replicas (Redis session store; undefined without it), connected on
   * first use: the reverse direction's client answers travel by it too (http/eras/up.ts).
   */
  relay: () => Promise<RoundRelay | undefined>;
  close(): Promise<void>;
}

/** The workload's shared state key in Redis, made by the first replica to ask. */
async function sharedKey(client: RedisClient, name: string, timeoutMs: number): Promise<Buffer> {
  const fresh = randomBytes(STATE_KEY_BYTES).toString('base64');
  await withTimeout(client.set(name, fresh, { condition: 'NX' }), timeoutMs, 'Redis');
  const stored = await withTimeout(client.get(name), timeoutMs, 'Redis');
  const key = stored === null ? undefined : Buffer.from(stored, 'base64');
  if (key?.length !== STATE_KEY_BYTES) {
    throw runtimeError(
      `the request state key in Redis (${name}) is not ${STATE_KEY_BYTES} bytes of base64; delete it so a new one is made`,
    );
  }
  return key;
}

/** States sealed with the workload's shared key, consumed in Redis, rounds relayed by pub/sub. */
async function redisBacking(
  redis: SessionRedis,
  workload: string,
  logger: Logger,
): Promise<StateBacking & { close(): Promise<void> }> {
  const [{ connectRedis }, { RedisRoundRelay }] = await Promise.all([
    import('../../sessions/redis.js'),
    import('./relay.js'),
  ]);
  const commandTimeoutMs = redisCommandTimeoutMs(redis);
  const prefix = `${redis.key_prefix ?? 'moat:'}mrtr:${workload}:`;
  const client = await connectRedis(redis, { logger });
  try {
    const key = await sharedKey(client, `${prefix}key`, commandTimeoutMs);
    const relay = await RedisRoundRelay.open(client, { prefix, commandTimeoutMs, logger });
    return {
      codec: new RequestStateCodec(key),
      singleUse: new RedisSingleUse(client, `${prefix}used:`, commandTimeoutMs),
      relay,
      close: () => relay.close(),
    };
  } catch (err) {
    if (client.isOpen) await client.close();
    throw err;
  }
}

export function createMrtr(
  config: Pick<RunConfig, 'name' | 'request_state_ttl' | 'upstream_timeout' | 'scaling_config'>,
  options: { logger: Logger },
): Mrtr {
  const redis = config.scaling_config?.session_redis;
  let backing: Promise<StateBacking & { close(): Promise<void> }> | undefined;
  const makeBacking = (): Promise<StateBacking & { close(): Promise<void> }> => {
    if (redis) return redisBacking(redis, config.name, options.logger);
    const singleUse = new MemorySingleUse();
    return Promise.resolve({
      codec: new RequestStateCodec(randomBytes(STATE_KEY_BYTES)),
      singleUse,
      close: () => {
        singleUse.close();
        return Promise.resolve();
      },
    });
  };
  // A failed connection is tried again on the next request, not remembered.
  const madeBacking = () =>
    (backing ??= makeBacking().catch((err: unknown) => {
      backing = undefined;
      throw runtimeError(`the request state store is unavailable: ${errorMessage(err)}`, {
        httpStatus: 503,
        cause: err,
      });
    }));
  const broker = new MrtrBroker({
    backing: madeBacking,
    ttlMs: requestStateTtlMs(config),
    timeoutMs: upstreamTimeoutMs(config),
    logger: options.logger,
  });
  return {
    broker,
    relay: async () => (redis ? (await madeBacking()).relay : undefined),
    close: async () => {
      broker.close();
      const made = await backing?.catch(() => undefined);
      await made?.close();
    },
  };
}
