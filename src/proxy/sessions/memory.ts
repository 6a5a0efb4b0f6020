/**
 * In-process session store. Sliding expiry: every `get` refreshes a session. Bounded: when full,
 * expired sessions go first, then the least recently used one if it has been idle for at least
 * `minIdleMs`; a session in active use is never evicted (creation fails instead).
 */
import type { SessionRecord, SessionStore } from '../types.js';
import { runtimeError, type MoatError } from '../../util/errors.js';

/** A new session's id is already in use: never overwrite (and so take over) a live session. */
export function sessionIdTaken(): MoatError {
  return runtimeError('session id already in use', { httpStatus: 503 });
}

export interface MemorySessionStoreOptions {
  ttlMs: number;
  /** Most sessions held at once (default 100 000). */
  maxSessions?: number;
  /** A session used more recently than this is never evicted to make room (default 60 s). */
  minIdleMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export class MemorySessionStore implements SessionStore {
  /** Insertion order = least recently used first (a `get` moves the entry to the end). */
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #ttlMs: number;
  readonly #maxSessions: number;
  readonly #minIdleMs: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: MemorySessionStoreOptions) {
    this.#ttlMs = options.ttlMs;
    this.#maxSessions = options.maxSessions ?? 100_000;
    this.#minIdleMs = Math.min(options.minIdleMs ?? 60_000, options.ttlMs);
    this.#now = options.now ?? Date.now;
    this.#sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(this.#ttlMs / 2, 60_000)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  create(record: SessionRecord): Promise<void> {
    const existing = this.#sessions.get(record.id);
    if (existing && !this.#expired(existing, this.#now())) return Promise.reject(sessionIdTaken());
    if (!existing && this.#sessions.size >= this.#maxSessions) {
      const full = this.#makeRoom();
      if (full) return Promise.reject(full);
    }
    this.#sessions.delete(record.id);
    this.#sessions.set(record.id, { ...record, metadata: { ...record.metadata } });
    return Promise.resolve();
  }

  get(id: string): Promise<SessionRecord | undefined> {
    const record = this.#sessions.get(id);
    if (!record) return Promise.resolve(undefined);
    const now = this.#now();
    if (this.#expired(record, now)) {
      this.#sessions.delete(id);
      return Promise.resolve(undefined);
    }
    record.lastAccess = now;
    this.#sessions.delete(id);
    this.#sessions.set(id, record);
    return Promise.resolve({ ...record, metadata: { ...record.metadata } });
  }

  update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<void> {
    const record = this.#sessions.get(id);
    if (record && !this.#expired(record, this.#now())) {
      Object.assign(record, patch, { metadata: { ...record.metadata, ...patch.metadata } });
    }
    return Promise.resolve();
  }

  delete(id: string): Promise<void> {
    this.#sessions.delete(id);
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#sessions.clear();
    return Promise.resolve();
  }

  /** Drops expired sessions. */
  sweep(): void {
    const now = this.#now();
    for (const [id, record] of this.#sessions) {
      if (this.#expired(record, now)) this.#sessions.delete(id);
    }
  }

  #expired(record: SessionRecord, now: number): boolean {
    return now - record.lastAccess >= this.#ttlMs;
  }

  /** Frees one slot, or returns the error to give when every session is in use. */
  #makeRoom(): MoatError | undefined {
    this.sweep();
    if (this.#sessions.size < this.#maxSessions) return undefined;
    const [oldestId, oldest] = this.#sessions.entries().next().value ?? [];
    if (oldestId !== undefined && oldest && this.#now() - oldest.lastAccess >= this.#minIdleMs) {
      this.#sessions.delete(oldestId);
      return undefined;
    }
    return runtimeError(`too many active MCP sessions (limit ${this.#maxSessions}); try again later`, {
      httpStatus: 503,
    });
  }
}
