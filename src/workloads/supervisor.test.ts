import { describe, expect, it } from 'vitest';
import { DEFAULT_RESTART_POLICY, restartDelay } from './supervisor.js';

describe('restartDelay', () => {
  it('starts at the initial delay, doubles, and is capped', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) => restartDelay(DEFAULT_RESTART_POLICY, attempt));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });
});
