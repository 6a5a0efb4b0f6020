/**
 * `moat supervise <name>` (hidden): the detached supervisor process `moat run` and `moat start`
 * spawn. It runs the workload until SIGTERM/SIGINT, logging to stdout/stderr (the log file).
 */
import { Command } from 'commander';
import { WorkloadStore } from '../workloads/store.js';
import { superviseWorkload } from '../workloads/supervisor.js';

export function superviseCommand(): Command {
  return new Command('supervise')
    .description('Internal: run a saved workload in this process (used by detached runs)')
    .argument('<name>', 'Workload name')
    .action(async (name: string) => {
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      try {
        await superviseWorkload({ store: new WorkloadStore(), name, signal: controller.signal });
      } finally {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
      }
    });
}
