/**
 * Crash-safe file primitives for the state store: atomic replacement (temp file + fsync +
 * rename, so a reader sees the old or the new file, never half of one) and an inter-process
 * lock (proper-lockfile: a lock directory whose mtime is refreshed while held, so a lock left by
 * a killed process goes stale and is taken over).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errorMessage, runtimeError } from '../util/errors.js';
import { log } from '../util/log.js';

export { writeFileAtomic } from '../util/atomic-file.js';

/** Parsed JSON of `path`, or undefined when the file does not exist. */
export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw runtimeError(
      `state file ${path} is not valid JSON (${errorMessage(err)}); remove it or fix it by hand`,
    );
  }
}

/** How long a held lock may go without a refresh before another process takes it over. */
const STALE_MS = 10_000;

/**
 * Runs `fn` while holding the lock `lockPath` (a directory proper-lockfile creates). Waits for
 * other holders for up to ~30 s.
 */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lockPath), { recursive: true, mode: 0o700 });
  // Loaded here: reading state (`moat list`) takes no lock and starts without it.
  const { default: lockfile } = await import('proper-lockfile');
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(lockPath, {
      realpath: false,
      lockfilePath: lockPath,
      stale: STALE_MS,
      retries: { retries: 300, minTimeout: 10, maxTimeout: 100, factor: 1.5 },
      onCompromised: (err) =>
        log().warn({ lock: lockPath, err: errorMessage(err) }, 'state lock compromised'),
    });
  } catch (err) {
    throw runtimeError(`could not lock ${lockPath}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    return await fn();
  } finally {
    await release().catch((err: unknown) =>
      log().warn({ lock: lockPath, err: errorMessage(err) }, 'could not release state lock'),
    );
  }
}
