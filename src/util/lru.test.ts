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

  it('keeps the order right when the newest entry is used again, deleted or replaced', () => {
    const lru = new LruMap<string, number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    // c is the newest: using it again leaves a as the oldest.
    expect(lru.get('c')).toBe(3);
    expect(lru.get('c')).toBe(3);
    lru.set('d', 4);
    expect(lru.get('a')).toBeUndefined();
    // Deleting the newest (d) and using b: c becomes the oldest and is forgotten first.
    lru.delete('d');
    expect(lru.get('b')).toBe(2);
    lru.set('e', 5);
    lru.set('f', 6);
    expect(lru.get('c')).toBeUndefined();
    expect([lru.get('b'), lru.get('e'), lru.get('f')]).toEqual([2, 5, 6]);
    // After clear nothing is the newest: a hit on a key set again moves it as usual.
    lru.clear();
    lru.set('x', 1);
    lru.set('y', 2);
    expect(lru.get('x')).toBe(1);
    lru.set('z', 3);
    lru.set('w', 4);
    expect(lru.get('y')).toBeUndefined();
    expect(lru.get('x')).toBe(1);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new LruMap(0)).toThrow(/maxEntries must be a positive integer, got 0/);
  });
});
