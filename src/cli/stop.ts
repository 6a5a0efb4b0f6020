/** `moat stop <name...> | --all | --group g`: stop workloads, keeping their state for `moat start`. */
import { Command } from 'commander';
import type { CliIO } from '../util/io.js';
import { forEachWorkload, lazyRuntime, loadWorkload, stopWorkload } from '../workloads/lifecycle.js';
import { selectWorkloads } from '../workloads/select.js';
import { WorkloadStore } from '../workloads/store.js';

export function stopCommand(io: CliIO): Command {
  return new Command('stop')
    .description('Stop workloads (state is kept; "moat start" brings them back)')
    .argument('[names...]', 'Workloads to stop')
    .option('-a, --all', 'Stop all workloads', false)
    .option('-g, --group <group>', 'Stop the workloads in this group')
    .action(async (names: string[], opts: { all: boolean; group?: string }) => {
      const store = new WorkloadStore();
      const selected = await selectWorkloads(store, 'stop', { names, ...opts });
      const runtime = lazyRuntime();
      await forEachWorkload(selected, io.stderr, async (name) => {
        await stopWorkload(store, await loadWorkload(store, name), runtime);
        io.stdout.write(`Stopped ${name}\n`);
      });
    });
}
