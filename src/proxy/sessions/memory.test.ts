import { afterEach, describe, expect, it } from 'vitest';
import { MemorySessionStore } from './memory.js';
import type { SessionRecord } from '../types.js';

let now = 1_000_000;
const clock = () => now;
const stores: MemorySessionStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

function store(
  options: { ttlMs?: number; maxSessions?: number; minIdleMs?: number } = {},
): MemorySessionStore {
  const s = new MemorySessionStore({ ttlMs: options.ttlMs ?? 10_000, now: clock, ...options });
  stores.push(s);
  return s;
}

const record = (id: string): SessionRecord => ({ id, createdAt: now, lastAccess: now, metadata: { k: 'v' } });

describe('MemorySessionStore', () => {
  it('creates, loads, merges and deletes; returned records are copies', async () => {
    const s = store();
    await s.create(record('a'));
    const loaded = await s.get('a');
    expect(loaded).toMatchObject({ id: 'a', metadata: { k: 'v' } });
    (loaded as SessionRecord).metadata.k = 'changed';
    await s.update('a', { backendSessionId: 'b', metadata: { extra: 'x' } });
    expect(await s.get('a')).toMatchObject({ backendSessionId: 'b', metadata: { k: 'v', extra: 'x' } });
    await s.delete('a');
    await s.delete('a');
    expect(await s.get('a')).toBeUndefined();
    await s.update('a', { backendSessionId: 'c' });
    expect(s.size).toBe(0);
  });

  it('never overwrites a live session with the same id (set-if-absent)', async () => {
    const s = store();
    await s.create({ ...record('taken'), principal: 'alice' });
    await expect(s.create({ ...record('taken'), principal: 'mallory' })).rejects.toThrow(/already in use/);
    expect(await s.get('taken')).toMatchObject({ principal: 'alice' });
  });

  it('expires sessions not used for a whole TTL, and every load slides it', async () => {
    const s = store({ ttlMs: 1000 });
    await s.create(record('slide'));
    await s.create(record('idle'));
    now += 600;
    expect(await s.get('slide')).toBeDefined();
    now += 600;
    expect(await s.get('slide')).toBeDefined();
    expect(await s.get('idle')).toBeUndefined();
    now += 1000;
    s.sweep();
    expect(s.size).toBe(0);
  });

  it('when full, evicts the least recently used idle session, never an active one', async () => {
    const s = store({ ttlMs: 100_000, maxSessions: 2, minIdleMs: 5000 });
    await s.create(record('old'));
    await s.create(record('young'));
    now += 6000;
    await s.get('young');
    await s.create(record('third'));
    expect(await s.get('old')).toBeUndefined();
    expect(await s.get('young')).toBeDefined();
    // Both remaining sessions were just used: nothing may be evicted.
    await expect(s.create(record('fourth'))).rejects.toThrow(/too many active MCP sessions/);
    expect(await s.get('third')).toBeDefined();
  });
});
