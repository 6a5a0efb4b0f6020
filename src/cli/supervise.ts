/**
 * `moat supervise <name>` (internal): the detached supervisor process `moat run` and `moat start`
 * spawn. It runs the workload until SIGTERM/SIGINT, logging to stdout/stderr (the log file).
 * `main.ts` routes here without loading the command tree: this process lives as long as the
 * workload, and commander, the flag table and the other commands would only add to its memory.
 */
import { usageError } from '../util/errors.js';
import { processIO, type CliIO } from '../util/io.js';
import { WorkloadStore } from '../workloads/store.js';
import { superviseWorkload } from '../workloads/supervisor.js';
import { runUntilStopped } from './exit.js';

export function runSupervise(args: readonly string[], io: CliIO = processIO): Promise<number> {
  return runUntilStopped(async (signal) => {
    const [name, ...extra] = args;
    if (name === undefined || name.startsWith('-') || extra.length > 0)
      throw usageError('usage: moat supervise <name> (internal: moat run and moat start use it)');
    await superviseWorkload({ store: new WorkloadStore(), name, signal });
    return 0;
  }, io);
}
