/**
 * What a test starts and must stop (controllers, operators): push it on the returned list, and
 * it is stopped after each test, all at once, whether the test passed or not.
 */
import { afterEach } from 'vitest';

export function stoppedAfterEach<T extends { stop(): Promise<void> }>(): T[] {
  const started: T[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((item) => item.stop()));
  });
  return started;
}
