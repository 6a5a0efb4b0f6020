/**
 * Starting a saved workload again (`moat start`, `moat restart`, the dashboard's buttons): the
 * steps before a supervisor takes over, shared so every caller starts a workload the same way.
 */
import type { ContainerRuntime } from '../runtime/types.js';
import type { CliIO } from '../util/io.js';
import { loadWorkload, stopWorkload, supervisorAlive, unknownWorkload } from './lifecycle.js';
import { resolveProxyPort } from './ports.js';
import { prepareOnTerminal, startDetached } from './run.js';
import type { WorkloadStore } from './store.js';

export type StartVerb = 'start' | 'restart';

/**
 * Everything before the supervisor: secrets and image (prepareOnTerminal), whatever still runs
 * stopped, the saved port checked, the status set to `starting`. Returns the supervisor's
 * environment, or undefined when `start` finds the workload running (and says so on stdout).
 */
export async function prepareSavedStart(
  store: WorkloadStore,
  name: string,
  verb: StartVerb,
  io: CliIO,
  runtime: () => Promise<ContainerRuntime>,
): Promise<Record<string, string> | undefined> {
  const workload = await loadWorkload(store, name);
  if (!workload.config) throw unknownWorkload(name);
  if (verb === 'start' && supervisorAlive(workload.status)) {
    const url = workload.status?.url ? ` at ${workload.status.url}` : '';
    io.stdout.write(`Workload "${name}" is already running${url}; "moat restart ${name}" restarts it.\n`);
    return undefined;
  }
  const supervisorEnv = await prepareOnTerminal(workload.config, io);
  await stopWorkload(store, workload, runtime);
  await resolveProxyPort(
    workload.config.host,
    workload.config.port,
    `another process uses it now; free the port, or export the workload, change "port" and run it again`,
  );
  await store.updateStatus(name, { status: 'starting', context: `${verb} on request`, process_id: 0 });
  return supervisorEnv;
}

/** Starts (or restarts) a saved workload detached, returning when it reports running. */
export async function startSavedWorkload(
  store: WorkloadStore,
  name: string,
  verb: StartVerb,
  io: CliIO,
  runtime: () => Promise<ContainerRuntime>,
): Promise<void> {
  const supervisorEnv = await prepareSavedStart(store, name, verb, io, runtime);
  if (supervisorEnv) await startDetached(store, name, io, supervisorEnv);
}
