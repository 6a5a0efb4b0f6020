/** For unit tests of user input: what a usage error (exit code 2) says. */
import { expect } from 'vitest';
import { MoatError } from '../../src/util/errors.js';

/** Runs `fn`, expects it to throw a usage error, and returns the error's message. */
export function usageErrorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(MoatError);
    expect((err as MoatError).exitCode).toBe(2);
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
}
