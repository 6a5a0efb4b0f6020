/** A short run of every fuzz target (bench/fuzz-targets.ts); `npm run fuzz` runs a million. */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { FUZZ_TARGETS } from '../../bench/fuzz-targets.js';

describe('fuzz targets (short run)', () => {
  afterAll(async () => {
    for (const target of FUZZ_TARGETS) await target.close?.();
  });
  for (const target of FUZZ_TARGETS) {
    it(target.name, async () => {
      // About a second each: a bound on time, never an assertion about it.
      await fc.assert(target.property(), { numRuns: 3000, interruptAfterTimeLimit: 1500 });
    });
  }
});
