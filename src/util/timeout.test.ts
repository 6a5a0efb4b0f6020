import { describe, expect, it } from 'vitest';
import { withTimeout } from './timeout.js';

describe('withTimeout', () => {
  it('passes the result of work that settles in time', async () => {
    await expect(withTimeout(Promise.resolve(7), 1000, 'x')).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('boom')), 1000, 'x')).rejects.toThrow('boom');
  });

  it('rejects, naming what did not answer, when the work never settles', async () => {
    await expect(withTimeout(new Promise(() => {}), 20, 'Redis')).rejects.toThrow(
      'Redis did not answer within 20 ms',
    );
  });
});
