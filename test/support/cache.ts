/**
 * A build cache shared by parallel test files and repeated runs: one directory under the OS temp
 * dir, entries keyed by content hash, and a cross-process lock per entry so a build happens once.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';

export const CACHE_DIR = join(tmpdir(), 'moat-test-cache');

export function contentHash(...parts: Array<string | Buffer>): string {
  const hash = createHash('sha256');
  for (const part of parts) {
    hash.update(String(part.length));
    hash.update(':');
    hash.update(part);
  }
  return hash.digest('hex').slice(0, 16);
}

/** Runs `build` while holding the lock named `key` (waits up to ~5 minutes for another builder). */
export async function withCacheLock<T>(key: string, build: () => Promise<T>): Promise<T> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const release = await lockfile.lock(join(CACHE_DIR, `${key}.build`), {
    realpath: false,
    stale: 60_000,
    retries: { retries: 600, minTimeout: 200, maxTimeout: 500 },
  });
  try {
    return await build();
  } finally {
    await release();
  }
}
