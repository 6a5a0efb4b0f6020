import { describe, expect, it } from 'vitest';
import { idleLimitBelow, KEEP_ALIVE_MARGIN_MS } from './keep-alive.js';

describe('idleLimitBelow', () => {
  it('stays the margin below a backend timeout of seconds', () => {
    expect(idleLimitBelow(5000)).toBe(5000 - KEEP_ALIVE_MARGIN_MS);
    expect(idleLimitBelow(75_000)).toBe(75_000 - KEEP_ALIVE_MARGIN_MS);
  });

  it('halves a timeout shorter than twice the margin', () => {
    expect(idleLimitBelow(200)).toBe(100);
    expect(idleLimitBelow(2000)).toBe(1000);
  });
});
