/**
 * A bounded map that forgets the least recently used entry when full. A Map keeps insertion
 * order, so re-inserting an entry on use moves it to the end and the first key is the oldest.
 * An entry that is already the newest is not moved: the usual hit (the same token or decision as
 * the request before) costs one lookup, and no delete and insert that make the Map rehash.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  /** The most recently used key while it is in the map (`hasNewest`). */
  private newest: K | undefined;
  private hasNewest = false;

  constructor(private readonly maxEntries: number) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`LruMap maxEntries must be a positive integer, got ${maxEntries}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    if (this.hasNewest && this.newest === key) return value;
    this.entries.delete(key);
    this.entries.set(key, value);
    this.markNewest(key);
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.markNewest(key);
    if (this.entries.size > this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value as K);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
    if (this.hasNewest && this.newest === key) this.forgetNewest();
  }

  clear(): void {
    this.entries.clear();
    this.forgetNewest();
  }

  private markNewest(key: K): void {
    this.newest = key;
    this.hasNewest = true;
  }

  private forgetNewest(): void {
    this.newest = undefined;
    this.hasNewest = false;
  }
}
