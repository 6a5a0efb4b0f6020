/**
 * Redis session store, shared by every proxy replica of a workload: key `<prefix><sessionId>`,
 * value the JSON session record, TTL refreshed on every read (GETEX) for sliding expiry.
 * TLS is all or nothing: a failed handshake is an error, never a silent plaintext retry.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { createClient } from '@redis/client';
import type { Logger } from 'pino';
import type { SessionRedis } from '../../config/runconfig.js';
import { redisCommandTimeoutMs } from '../../config/derived.js';
import { errorMessage, runtimeError, usageError } from '../../util/errors.js';
import { withTimeout } from '../../util/timeout.js';
import type { SessionRecord, SessionStore } from '../types.js';
import { sessionIdTaken } from './memory.js';

export const DEFAULT_KEY_PREFIX = 'moat:proxy:session:';
export const PASSWORD_ENV = 'MOAT_SESSION_REDIS_PASSWORD';
const FIELD = 'scaling_config.session_redis';

/** Splits `host:port` / `[v6]:port` / `host` (port 6379). */
export function parseRedisAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s]+))(?::(\d{1,5}))?$/.exec(address.trim());
  const port = m?.[3] === undefined ? 6379 : Number(m[3]);
  const host = m?.[1] ?? m?.[2];
  if (!host || port < 1 || port > 65535) {
    throw usageError(
      `${FIELD}.address "${address}" is not valid: expected host:port (e.g. redis.example:6379)`,
    );
  }
  return { host, port };
}

async function readPassword(config: SessionRedis, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (config.password_file) {
    try {
      return (await readFile(config.password_file, 'utf8')).replace(/\r?\n$/, '');
    } catch (err) {
      throw usageError(`${FIELD}.password_file could not be read: ${errorMessage(err)}`);
    }
  }
  return env[PASSWORD_ENV] || undefined;
}

async function readCa(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw usageError(`${FIELD}.tls.ca_cert_file could not be read: ${errorMessage(err)}`);
  }
}

export interface RedisSessionStoreOptions {
  ttlMs: number;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

function buildClient(options: Parameters<typeof createClient>[0] & object) {
  return createClient(options);
}
export type RedisClient = ReturnType<typeof buildClient>;
type Client = RedisClient;

/**
 * A connected client for the configured Redis (also used by the rate limiter's shared buckets).
 * Fails when Redis is unreachable, refuses the password or fails TLS.
 */
export async function connectRedis(
  config: SessionRedis,
  options: { logger: Logger; env?: NodeJS.ProcessEnv },
): Promise<RedisClient> {
  const { host, port } = parseRedisAddress(config.address);
  const password = await readPassword(config, options.env ?? process.env);
  let connected = false;
  // Before the first success a failure ends connect(); afterwards reconnect with backoff.
  const reconnectStrategy = (retries: number, cause: Error): number | Error =>
    connected ? Math.min(100 * 2 ** retries, 5000) : cause;
  const common = { host, port, connectTimeout: 5000, reconnectStrategy };
  const socket = config.tls
    ? {
        ...common,
        tls: true as const,
        ...(config.tls.ca_cert_file ? { ca: await readCa(config.tls.ca_cert_file) } : {}),
        rejectUnauthorized: config.tls.insecure_skip_verify !== true,
        ...(isIP(host) ? {} : { servername: host }),
      }
    : common;
  const client = buildClient({
    socket,
    database: config.db ?? 0,
    disableOfflineQueue: true,
    ...(password === undefined ? {} : { password }),
  });
  let lastLogged = 0;
  client.on('error', (err: unknown) => {
    // The client emits every failed reconnect; log at most one line per 10 s.
    if (!connected || Date.now() - lastLogged < 10_000) return;
    lastLogged = Date.now();
    options.logger.warn({ err: errorMessage(err) }, 'session store (Redis) connection error');
  });
  try {
    await client.connect();
    // A missing password only shows on the first command: check now, not on a client's request.
    await client.ping();
    connected = true;
  } catch (err) {
    client.destroy();
    throw runtimeError(
      `cannot connect to the Redis session store at ${config.address}${config.tls ? ' (TLS)' : ''}: ${errorMessage(err)}`,
      { cause: err },
    );
  }
  return client;
}

export class RedisSessionStore implements SessionStore {
  readonly #client: Client;
  readonly #prefix: string;
  readonly #ttlSeconds: number;
  readonly #commandTimeoutMs: number;

  private constructor(client: Client, config: SessionRedis, ttlMs: number) {
    this.#client = client;
    this.#prefix = config.key_prefix ?? DEFAULT_KEY_PREFIX;
    this.#ttlSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
    this.#commandTimeoutMs = redisCommandTimeoutMs(config);
  }

  /** Connects (failing when Redis is unreachable, refuses the password or fails TLS) and returns the store. */
  static async connect(config: SessionRedis, options: RedisSessionStoreOptions): Promise<RedisSessionStore> {
    const client = await connectRedis(config, options);
    return new RedisSessionStore(client, config, options.ttlMs);
  }

  /**
   * Bounds a command: a stuck Redis must fail requests (503), not hang them. (The client's own
   * command timeout stops counting once a command is written, so a frozen server would hang it
   * forever; the late reply is still read in order by the client.)
   */
  #bounded<T>(command: Promise<T>): Promise<T> {
    return withTimeout(command, this.#commandTimeoutMs, 'Redis');
  }

  #key(id: string): string {
    return this.#prefix + id;
  }

  async create(record: SessionRecord): Promise<void> {
    // NX: atomic set-if-absent, so two replicas can never both own one id.
    const stored = await this.#bounded(
      this.#client.set(this.#key(record.id), JSON.stringify(record), {
        condition: 'NX',
        expiration: { type: 'EX', value: this.#ttlSeconds },
      }),
    );
    if (stored === null) throw sessionIdTaken();
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const text = await this.#bounded(
      this.#client.getEx(this.#key(id), { type: 'EX', value: this.#ttlSeconds }),
    );
    if (text === null) return undefined;
    const record = JSON.parse(text) as SessionRecord;
    record.lastAccess = Date.now();
    return record;
  }

  async update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<void> {
    const text = await this.#bounded(this.#client.get(this.#key(id)));
    if (text === null) return;
    const record = JSON.parse(text) as SessionRecord;
    const merged: SessionRecord = {
      ...record,
      ...patch,
      id,
      metadata: { ...record.metadata, ...patch.metadata },
    };
    // XX: never resurrect a session deleted meanwhile.
    await this.#bounded(
      this.#client.set(this.#key(id), JSON.stringify(merged), {
        condition: 'XX',
        expiration: { type: 'EX', value: this.#ttlSeconds },
      }),
    );
  }

  async delete(id: string): Promise<void> {
    await this.#bounded(this.#client.del(this.#key(id)));
  }

  async problem(): Promise<string | undefined> {
    try {
      await this.#bounded(this.#client.ping());
      return undefined;
    } catch (err) {
      return `Redis is not answering (PING bound ${this.#commandTimeoutMs} ms): ${errorMessage(err)}`;
    }
  }

  async close(): Promise<void> {
    if (this.#client.isOpen) await this.#client.close();
  }
}
