import { describe, expect, it } from 'vitest';
import { roundOrder } from './round-order.js';

describe('roundOrder', () => {
  it('gives every cell once per round, the first round as listed', () => {
    expect(roundOrder(5, 0)).toEqual([0, 1, 2, 3, 4]);
    for (const n of [1, 2, 3, 12]) {
      for (let round = 0; round < 5; round++) {
        expect([...roundOrder(n, round)].sort((a, b) => a - b)).toEqual(
          Array.from({ length: n }, (_, i) => i),
        );
      }
    }
  });

  it('changes which cell follows direct (cell 0) across the rounds, the same way every run', () => {
    const after = (round: number) => {
      const order = roundOrder(12, round);
      return order[(order.indexOf(0) + 1) % order.length];
    };
    const followers = new Set([0, 1, 2, 3, 4].map(after));
    expect(followers.size).toBeGreaterThan(2);
    expect(roundOrder(12, 3)).toEqual(roundOrder(12, 3));
    expect(roundOrder(12, 3)).not.toEqual(roundOrder(12, 4));
  });
});
