/**
 * `moat supervise [--foreground [--remove-after]] <name>` (internal): the supervisor process. `moat
 * run` and `moat start` spawn it detached, logging to stdout/stderr (the log file); with -f they
 * become it (--foreground: the URL on the terminal; --remove-after: the state deleted at the end).
 * It runs the workload until SIGTERM/SIGINT. `main.ts` routes here without loading the command
 * tree: this process lives as long as the workload, and commander, the flag table and the other
 * commands would only add to its memory.
 */
import { usageError } from '../util/errors.js';
import { processIO, type CliIO } from '../util/io.js';
import {
  SUPERVISE_FOREGROUND,
  SUPERVISE_REMOVE_AFTER,
  superviseInForeground,
} from '../workloads/foreground.js';
import { WorkloadStore } from '../workloads/store.js';
import { superviseWorkload } from '../workloads/supervisor.js';
import { runUntilStopped } from './exit.js';
import { followWorkloadChanges } from './client-sync.js';

const USAGE =
  `usage: moat supervise <name>, or moat supervise ${SUPERVISE_FOREGROUND} [${SUPERVISE_REMOVE_AFTER}] <name> ` +
  '(internal: moat run and moat start use it)';

interface SuperviseArgs {
  name: string;
  foreground: boolean;
  removeAfter: boolean;
}

function parseSuperviseArgs(args: readonly string[]): SuperviseArgs {
  const foreground = args[0] === SUPERVISE_FOREGROUND;
  const removeAfter = foreground && args[1] === SUPERVISE_REMOVE_AFTER;
  const [name, ...extra] = args.slice(Number(foreground) + Number(removeAfter));
  if (name === undefined || name.startsWith('-') || extra.length > 0) throw usageError(USAGE);
  return { name, foreground, removeAfter };
}

export function runSupervise(args: readonly string[], io: CliIO = processIO): Promise<number> {
  return runUntilStopped(async (signal) => {
    const { name, foreground, removeAfter } = parseSuperviseArgs(args);
    const store = new WorkloadStore();
    if (foreground) {
      // A foreground run is a `moat` command on the terminal: its clients follow it as `moat run`'s do.
      followWorkloadChanges(io, () => store);
      await superviseInForeground(store, name, io, { removeAfter, signal });
    } else await superviseWorkload({ store, name, signal });
    return 0;
  }, io);
}
