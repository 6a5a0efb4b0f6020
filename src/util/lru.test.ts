import { describe, expect, it } from 'vitest';
import { LruMap } from './lru.js';

describe('LruMap', () => {
  it('forgets the least recently used entry when full', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.get('c')).toBe(3);
    expect(lru.size).toBe(2);
  });

  it('replaces a value without growing', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1);
    lru.set('a', 2);
    expect(lru.size).toBe(1);
    expect(lru.get('a')).toBe(2);
    lru.delete('a');
    expect(lru.get('a')).toBeUndefined();
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new LruMap(0)).toThrow(/maxEntries must be a positive integer, got 0/);
  });
});
