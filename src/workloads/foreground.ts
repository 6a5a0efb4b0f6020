/**
 * A supervisor in the foreground (`moat run -f`, `moat start -f`): the workload's URL on the
 * terminal, and with `removeAfter` the container and all state deleted when it ends. Kept apart
 * from run.ts so the supervisor process (`moat supervise --foreground`) loads only this.
 */
import type { CliIO } from '../util/io.js';
import { lazyRuntime, loadWorkload, removeWorkload } from './lifecycle.js';
import type { WorkloadStore } from './store.js';
import { announceWorkloadChange } from './changes.js';
import { superviseWorkload } from './supervisor.js';

/** The internal flags of `moat supervise` for a foreground run (see runForeground). */
export const SUPERVISE_FOREGROUND = '--foreground';
export const SUPERVISE_REMOVE_AFTER = '--remove-after';

/**
 * Supervises the workload with its URL on the terminal until `signal` aborts or the workload
 * ends; `removeAfter` then deletes the container and all state.
 */
export async function superviseInForeground(
  store: WorkloadStore,
  name: string,
  io: CliIO,
  options: { removeAfter: boolean; signal: AbortSignal },
): Promise<void> {
  try {
    await superviseWorkload({
      store,
      name,
      signal: options.signal,
      onReady: (url, metricsUrl) => {
        io.stdout.write(
          `Workload "${name}" is running; press Ctrl-C to stop.\nURL: ${url}\n${metricsUrl ? `Metrics: ${metricsUrl}\n` : ''}`,
        );
        void announceWorkloadChange({ kind: 'running', name });
      },
    });
  } finally {
    const workload = await loadWorkload(store, name).catch(() => undefined);
    if (options.removeAfter && workload) await removeWorkload(store, workload, lazyRuntime());
    else await announceWorkloadChange({ kind: 'stopped', name });
  }
}
