/**
 * The Redis session store against real redis-server instances: plain, with a password, and
 * TLS-only. A TLS failure is an error, never a plaintext retry.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionRedis } from '../../../src/config/runconfig.js';
import { createSessionStore } from '../../../src/proxy/sessions/index.js';
import { RedisSessionStore } from '../../../src/proxy/sessions/redis.js';
import type { SessionRecord } from '../../../src/proxy/types.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { memoryLogger } from '../../support/proxy-harness.js';

const logger = memoryLogger().logger;
const HOUR = 3_600_000;

function record(id: string): SessionRecord {
  const now = Date.now();
  return {
    id,
    backendSessionId: `backend-${id}`,
    createdAt: now,
    lastAccess: now,
    metadata: { transport: 'sse' },
  };
}

function connect(config: SessionRedis, env: NodeJS.ProcessEnv = {}): Promise<RedisSessionStore> {
  return RedisSessionStore.connect(config, { ttlMs: HOUR, logger, env });
}

describe('plain Redis', () => {
  let redis: RedisServer;
  let raw: ReturnType<typeof createClient>;
  beforeAll(async () => {
    redis = await startRedis();
    raw = createClient({ socket: { host: '127.0.0.1', port: redis.port } });
    await raw.connect();
  });
  afterAll(async () => {
    await raw.close();
    await redis.stop();
  });

  it('stores, loads, updates and deletes sessions under the default key prefix', async () => {
    const store = await connect({ address: redis.address });
    await store.create(record('s1'));
    expect(await raw.exists('moat:proxy:session:s1')).toBe(1);
    expect(await store.get('s1')).toMatchObject({
      id: 's1',
      backendSessionId: 'backend-s1',
      metadata: { transport: 'sse' },
    });
    await store.update('s1', { backendSessionId: 'b2', metadata: { endpoint: 'http://x/messages' } });
    expect(await store.get('s1')).toMatchObject({
      backendSessionId: 'b2',
      metadata: { transport: 'sse', endpoint: 'http://x/messages' },
    });
    await store.delete('s1');
    await store.delete('s1');
    expect(await store.get('s1')).toBeUndefined();
    // update never resurrects a deleted session
    await store.update('s1', { backendSessionId: 'b3' });
    expect(await raw.exists('moat:proxy:session:s1')).toBe(0);
    await store.close();
  });

  it('slides the TTL on every load (GETEX) and forgets expired sessions', async () => {
    const store = await connect({ address: redis.address });
    await store.create(record('slide'));
    expect(await raw.ttl('moat:proxy:session:slide')).toBeGreaterThan(3500);
    await raw.expire('moat:proxy:session:slide', 5);
    await store.get('slide');
    expect(await raw.ttl('moat:proxy:session:slide')).toBeGreaterThan(3500);
    await raw.pExpire('moat:proxy:session:slide', 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.get('slide')).toBeUndefined();
    await store.close();
  });

  it('honors key_prefix and db', async () => {
    const store = await connect({ address: redis.address, key_prefix: 'team-a:', db: 2 });
    await store.create(record('p1'));
    expect(await raw.exists('team-a:p1')).toBe(0);
    const db2 = createClient({ socket: { host: '127.0.0.1', port: redis.port }, database: 2 });
    await db2.connect();
    expect(await db2.exists('team-a:p1')).toBe(1);
    await db2.close();
    await store.close();
  });

  it('is chosen by createSessionStore when scaling_config.session_redis is set', async () => {
    const store = await createSessionStore(
      { scaling_config: { session_redis: { address: redis.address } }, session_ttl: '10m' },
      { logger },
    );
    expect(store).toBeInstanceOf(RedisSessionStore);
    await store.create(record('chosen'));
    expect(await raw.ttl('moat:proxy:session:chosen')).toBeGreaterThan(500);
    expect(await raw.ttl('moat:proxy:session:chosen')).toBeLessThanOrEqual(600);
    await store.close();
  });

  it('fails clearly when Redis is not there', async () => {
    await expect(connect({ address: '127.0.0.1:1' })).rejects.toThrow(
      /cannot connect to the Redis session store at 127\.0\.0\.1:1/,
    );
  });

  it('refuses a malformed address naming the field', async () => {
    await expect(connect({ address: 'redis://x:1' })).rejects.toThrow(
      /scaling_config\.session_redis\.address/,
    );
  });
});

describe('Redis with a password', () => {
  let redis: RedisServer;
  let dir: string;
  beforeAll(async () => {
    redis = await startRedis({ password: 's3cret-pass' });
    dir = mkdtempSync(join(tmpdir(), 'moat-redis-pw-'));
  });
  afterAll(() => redis.stop());

  it('reads the password from password_file', async () => {
    const file = join(dir, 'pw');
    writeFileSync(file, 's3cret-pass\n', { mode: 0o600 });
    const store = await connect({ address: redis.address, password_file: file });
    await store.create(record('pw1'));
    expect(await store.get('pw1')).toBeDefined();
    await store.close();
  });

  it('reads the password from MOAT_SESSION_REDIS_PASSWORD', async () => {
    const store = await connect({ address: redis.address }, { MOAT_SESSION_REDIS_PASSWORD: 's3cret-pass' });
    await store.create(record('pw2'));
    await store.close();
  });

  it('fails on a wrong or missing password', async () => {
    await expect(
      connect({ address: redis.address }, { MOAT_SESSION_REDIS_PASSWORD: 'wrong' }),
    ).rejects.toThrow(/WRONGPASS|invalid username-password/);
    await expect(connect({ address: redis.address })).rejects.toThrow(/NOAUTH/);
  });

  it('names password_file when it cannot be read', async () => {
    await expect(connect({ address: redis.address, password_file: join(dir, 'missing') })).rejects.toThrow(
      /password_file/,
    );
  });
});

describe('Redis over TLS', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ tls: true, password: 'tls-pass' });
  });
  afterAll(() => redis.stop());
  const env = { MOAT_SESSION_REDIS_PASSWORD: 'tls-pass' };

  it('connects with the CA file', async () => {
    const store = await connect({ address: redis.address, tls: { ca_cert_file: redis.tls?.caFile } }, env);
    await store.create(record('tls1'));
    expect(await store.get('tls1')).toMatchObject({ id: 'tls1' });
    await store.close();
  });

  it('fails with a certificate error for the wrong CA, without a plaintext retry', async () => {
    const failure = connect({ address: redis.address, tls: { ca_cert_file: redis.tls?.otherCaFile } }, env);
    await expect(failure).rejects.toThrow(/\(TLS\).*(certificate|self[- ]signed)/i);
  });

  it('fails when TLS is not configured for a TLS-only server (no silent downgrade either way)', async () => {
    await expect(connect({ address: redis.address }, env)).rejects.toThrow(/cannot connect/);
  });

  it('connects with insecure_skip_verify despite the wrong CA', async () => {
    const store = await connect(
      { address: redis.address, tls: { ca_cert_file: redis.tls?.otherCaFile, insecure_skip_verify: true } },
      env,
    );
    await store.create(record('tls2'));
    await store.close();
  });
});
