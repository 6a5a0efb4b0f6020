/**
 * A separate process hammering the workload state store, for the concurrency test in
 * src/workloads/store.test.ts. Usage: state-worker.ts <moatHome> <workerId> <rounds>
 * Each round increments the shared workload's `restarts` (a read-modify-write under the lock)
 * and creates this worker's own workload `w<id>-<round>`, removing the odd ones again.
 */
import { moatDirs } from '../../src/util/paths.js';
import { applyStatusChange } from '../../src/workloads/status.js';
import { WorkloadStore } from '../../src/workloads/store.js';

const [home, id, rounds] = process.argv.slice(2);
const store = new WorkloadStore(moatDirs({ MOAT_HOME: home }));

for (let round = 0; round < Number(rounds); round++) {
  await store.withWorkloadLock('shared', async () => {
    const current = await store.readStatus('shared');
    const next = applyStatusChange(current, { restarts: (current?.restarts ?? 0) + 1 }, new Date());
    await store.writeStatus('shared', next);
  });
  const name = `w${id}-${round}`;
  await store.updateStatus(name, { status: 'stopped', context: `created by worker ${id}` });
  if (round % 2 === 1) await store.withWorkloadLock(name, () => store.deleteWorkloadFiles(name));
}
