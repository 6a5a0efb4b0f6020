/** `moat stop <name...> | --all | --group g`: stop workloads, keeping their state for `moat start`. */
import type { Command } from 'commander';
import type { CliIO } from '../util/io.js';
import { loadWorkload, stopWorkload } from '../workloads/lifecycle.js';
import { forSelectedWorkloads, workloadSelectionCommand } from './workload-selection.js';

export function stopCommand(io: CliIO): Command {
  return workloadSelectionCommand(
    'stop',
    'stop',
    'Stop workloads (state is kept; "moat start" brings them back)',
  ).action(async (names: string[], opts: { all: boolean; group?: string }) => {
    await forSelectedWorkloads(io, 'stop', { names, ...opts }, async (store, name, runtime) => {
      await stopWorkload(store, await loadWorkload(store, name), runtime);
      io.stdout.write(`Stopped ${name}\n`);
    });
  });
}
