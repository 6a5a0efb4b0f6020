/**
 * `moat start <name...>` starts workloads from their saved RunConfig, detached (or in the
 * foreground with -f); a workload whose supervisor is alive is left alone and said so. `moat
 * restart <name...>` stops whatever still runs first. Both bring back a workload whose supervisor
 * was killed.
 */
import type { Command } from 'commander';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { forEachWorkload, lazyRuntime } from '../workloads/lifecycle.js';
import { selectWorkloads } from '../workloads/select.js';
import { WorkloadStore } from '../workloads/store.js';
import { workloadSelectionCommand } from './workload-selection.js';

const DESCRIPTIONS = {
  start: 'Start stopped workloads from their saved run configuration (a running one is left alone)',
  restart: 'Restart workloads: stop what still runs, then start from the saved run configuration',
};

export function startCommand(io: CliIO): Command {
  return startOrRestart(io, 'start');
}

export function restartCommand(io: CliIO): Command {
  return startOrRestart(io, 'restart');
}

function startOrRestart(io: CliIO, verb: 'start' | 'restart'): Command {
  return workloadSelectionCommand(verb, verb, DESCRIPTIONS[verb])
    .option('-f, --foreground', 'Run in the foreground until the workload exits (one workload only)', false)
    .action(async (names: string[], opts: { all: boolean; group?: string; foreground: boolean }) => {
      const store = new WorkloadStore();
      const selected = await selectWorkloads(store, verb, { names, all: opts.all, group: opts.group });
      if (opts.foreground && selected.length !== 1)
        throw usageError('--foreground starts exactly one workload');
      const runtime = lazyRuntime();
      // Loaded here: it brings the supervisor launch and the secrets, which `moat --help` does without.
      const { runForeground, startDetached } = await import('../workloads/run.js');
      const { prepareSavedStart } = await import('../workloads/start.js');
      await forEachWorkload(selected, io.stderr, async (name) => {
        const supervisorEnv = await prepareSavedStart(store, name, verb, io, runtime);
        if (!supervisorEnv) return;
        if (opts.foreground) await runForeground(store, name, io, { removeAfter: false, supervisorEnv });
        else await startDetached(store, name, io, supervisorEnv);
      });
    });
}
