/**
 * `moat start <name...>` (alias `restart`): stops whatever of the workload still runs, then
 * starts it again from its saved RunConfig, detached (or in the foreground with -f). Also
 * brings back a workload whose supervisor was killed.
 */
import { Command } from 'commander';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import {
  forEachWorkload,
  lazyRuntime,
  loadWorkload,
  stopWorkload,
  unknownWorkload,
} from '../workloads/lifecycle.js';
import { resolveProxyPort } from '../workloads/ports.js';
import { prepareOnTerminal, runForeground, startDetached } from '../workloads/run.js';
import { selectWorkloads } from '../workloads/select.js';
import { WorkloadStore } from '../workloads/store.js';

export function startCommand(io: CliIO): Command {
  return new Command('start')
    .alias('restart')
    .description('Start (or restart) workloads from their saved run configuration')
    .argument('[names...]', 'Workloads to start')
    .option('-a, --all', 'Start all workloads', false)
    .option('-g, --group <group>', 'Start the workloads in this group')
    .option('-f, --foreground', 'Run in the foreground until the workload exits (one workload only)', false)
    .action(async (names: string[], opts: { all: boolean; group?: string; foreground: boolean }) => {
      const store = new WorkloadStore();
      const selected = await selectWorkloads(store, 'start', { names, all: opts.all, group: opts.group });
      if (opts.foreground && selected.length !== 1)
        throw usageError('--foreground starts exactly one workload');
      const runtime = lazyRuntime();
      await forEachWorkload(selected, io.stderr, async (name) => {
        const workload = await loadWorkload(store, name);
        if (!workload.config) throw unknownWorkload(name);
        const supervisorEnv = await prepareOnTerminal(workload.config, io);
        await stopWorkload(store, workload, runtime);
        await resolveProxyPort(
          workload.config.host,
          workload.config.port,
          `another process uses it now; free the port, or export the workload, change "port" and run it again`,
        );
        await store.updateStatus(name, { status: 'starting', context: 'starting on request', process_id: 0 });
        if (opts.foreground) await runForeground(store, name, io, { removeAfter: false, supervisorEnv });
        else await startDetached(store, name, io, supervisorEnv);
      });
    });
}
