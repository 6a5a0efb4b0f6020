/** A bound on one awaited call, for clients whose own timeouts do not cover every phase. */

/**
 * Settles like `work`, or rejects with "`what` did not answer within `ms` ms" once `ms` have
 * passed. The work itself is not stopped: a late result is ignored.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
