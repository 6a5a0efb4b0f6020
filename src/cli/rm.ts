/** `moat rm <name...> | --all | --group g`: stop workloads and delete their container and state. */
import type { Command } from 'commander';
import type { CliIO } from '../util/io.js';
import { loadWorkloadForRemoval, removeWorkload } from '../workloads/lifecycle.js';
import { forSelectedWorkloads, workloadSelectionCommand } from './workload-selection.js';

export function rmCommand(io: CliIO): Command {
  return workloadSelectionCommand(
    'rm',
    'remove',
    'Stop and remove workloads: container, run configuration, status and logs',
  ).action(async (names: string[], opts: { all: boolean; group?: string }) => {
    await forSelectedWorkloads(io, 'rm', { names, ...opts }, async (store, name, runtime) => {
      await removeWorkload(store, await loadWorkloadForRemoval(store, name), runtime);
      io.stdout.write(`Removed ${name}\n`);
    });
  });
}
