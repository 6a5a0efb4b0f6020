/**
 * `moat start <name...>` starts workloads from their saved RunConfig, detached (or in the
 * foreground with -f); a workload whose supervisor is alive is left alone and said so. `moat
 * restart <name...>` stops whatever still runs first. Both bring back a workload whose supervisor
 * was killed.
 */
import type { Command } from 'commander';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import {
  forEachWorkload,
  lazyRuntime,
  loadWorkload,
  stopWorkload,
  supervisorAlive,
  unknownWorkload,
} from '../workloads/lifecycle.js';
import { resolveProxyPort } from '../workloads/ports.js';
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
      const { prepareOnTerminal, runForeground, startDetached } = await import('../workloads/run.js');
      await forEachWorkload(selected, io.stderr, async (name) => {
        const workload = await loadWorkload(store, name);
        if (!workload.config) throw unknownWorkload(name);
        if (verb === 'start' && supervisorAlive(workload.status)) {
          const url = workload.status?.url ? ` at ${workload.status.url}` : '';
          io.stdout.write(
            `Workload "${name}" is already running${url}; "moat restart ${name}" restarts it.\n`,
          );
          return;
        }
        const supervisorEnv = await prepareOnTerminal(workload.config, io);
        await stopWorkload(store, workload, runtime);
        await resolveProxyPort(
          workload.config.host,
          workload.config.port,
          `another process uses it now; free the port, or export the workload, change "port" and run it again`,
        );
        await store.updateStatus(name, { status: 'starting', context: `${verb} on request`, process_id: 0 });
        if (opts.foreground) await runForeground(store, name, io, { removeAfter: false, supervisorEnv });
        else await startDetached(store, name, io, supervisorEnv);
      });
    });
}
