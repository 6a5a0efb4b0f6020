/** `moat rm <name...> | --all | --group g`: stop workloads and delete their container and state. */
import { Command } from 'commander';
import type { CliIO } from '../util/io.js';
import {
  forEachWorkload,
  lazyRuntime,
  loadWorkloadForRemoval,
  removeWorkload,
} from '../workloads/lifecycle.js';
import { selectWorkloads } from '../workloads/select.js';
import { WorkloadStore } from '../workloads/store.js';

export function rmCommand(io: CliIO): Command {
  return new Command('rm')
    .description('Stop and remove workloads: container, run configuration, status and logs')
    .argument('[names...]', 'Workloads to remove')
    .option('-a, --all', 'Remove all workloads', false)
    .option('-g, --group <group>', 'Remove the workloads in this group')
    .action(async (names: string[], opts: { all: boolean; group?: string }) => {
      const store = new WorkloadStore();
      const selected = await selectWorkloads(store, 'rm', { names, ...opts });
      const runtime = lazyRuntime();
      await forEachWorkload(selected, io.stderr, async (name) => {
        await removeWorkload(store, await loadWorkloadForRemoval(store, name), runtime);
        io.stdout.write(`Removed ${name}\n`);
      });
    });
}
