import { describe, expect, it } from 'vitest';
import { MemoryBuckets } from './memory.js';

let now = 0;
const perMinute = (key: string, rpm: number, burst = rpm) => ({
  key,
  capacity: burst,
  refillPerMs: rpm / 60_000,
});

describe('MemoryBuckets', () => {
  it('allows a burst, then one token per refill interval, and says how long to wait', async () => {
    const buckets = new MemoryBuckets({ now: () => now });
    const limit = perMinute('a', 60, 2);
    expect(await buckets.take([limit])).toEqual({ allowed: true });
    expect(await buckets.take([limit])).toEqual({ allowed: true });
    expect(await buckets.take([limit])).toEqual({ allowed: false, retryAfterMs: 1000 });
    now += 400;
    expect(await buckets.take([limit])).toEqual({ allowed: false, retryAfterMs: 600 });
    now += 600;
    expect(await buckets.take([limit])).toEqual({ allowed: true });
  });

  it('takes from all buckets or from none', async () => {
    const buckets = new MemoryBuckets({ now: () => now });
    const principal = perMinute('p', 60, 5);
    const tool = perMinute('t', 60, 1);
    expect((await buckets.take([principal, tool])).allowed).toBe(true);
    expect((await buckets.take([principal, tool])).allowed).toBe(false);
    // The refused call took nothing from the principal's bucket: 4 left.
    for (let i = 0; i < 4; i++) expect((await buckets.take([principal])).allowed).toBe(true);
    expect((await buckets.take([principal])).allowed).toBe(false);
  });

  it('stays bounded, dropping refilled buckets first', async () => {
    const buckets = new MemoryBuckets({ now: () => now, maxBuckets: 10 });
    for (let i = 0; i < 50; i++) await buckets.take([perMinute(`k${i}`, 60, 1)]);
    expect(buckets.size).toBeLessThanOrEqual(10);
  });
});
