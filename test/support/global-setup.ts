/**
 * Starts the shared test infrastructure once per test run and stops it by PID afterwards.
 * Each piece lives in its own module under test/support/.
 */
import { startKubeCluster } from './kube-cluster.js';
import { startPodmanService } from './podman.js';
import { checkRedisTools } from './redis.js';

export default async function setup(): Promise<() => Promise<void>> {
  const teardowns: Array<() => Promise<void>> = [];
  teardowns.push(await startPodmanService());
  teardowns.push(checkRedisTools());
  teardowns.push(await startKubeCluster());
  return async () => {
    for (const teardown of teardowns.reverse()) await teardown();
  };
}
