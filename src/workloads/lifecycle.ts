/**
 * Stopping, removing and observing workloads from a `moat` command (not the supervisor). A
 * workload is stopped by signalling its supervisor (verified by PID and start time first), then
 * making sure its container is stopped too, which also covers a supervisor that was killed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { runsContainer } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { LABELS, type ContainerInfo, type ContainerRuntime } from '../runtime/types.js';
import { errorMessage, runtimeError, usageError } from '../util/errors.js';
import { isSupervisorProcess } from './process.js';
import { reconcileStatus, type Observation, type ReconciledStatus, type StatusRecord } from './status.js';
import type { WorkloadStore } from './store.js';
import { announceWorkloadChange } from './changes.js';

/** How long a supervisor gets to shut down after SIGTERM before it is killed. */
const SUPERVISOR_STOP_TIMEOUT_MS = 45_000;

export interface Workload {
  name: string;
  config: RunConfig | undefined;
  status: StatusRecord | undefined;
}

export function unknownWorkload(name: string): Error {
  return usageError(`workload "${name}" does not exist ("moat list --all" shows all workloads)`);
}

/**
 * The saved state of a workload; an unknown name is a usage error naming it. With `validate`
 * false the RunConfig is taken as Moat saved it (see readSavedRunConfig): for reading only
 * (`moat list`), which then starts without the schema library.
 */
export async function loadWorkload(
  store: WorkloadStore,
  name: string,
  { validate = true }: { validate?: boolean } = {},
): Promise<Workload> {
  const [config, status] = await Promise.all([
    validate ? store.readRunConfig(name) : store.readSavedRunConfig(name),
    store.readStatus(name),
  ]);
  if (!config && !status) throw unknownWorkload(name);
  return { name, config, status };
}

/**
 * For `moat rm`: whatever of the state can still be read. A corrupt RunConfig or status file
 * must not make a workload impossible to remove.
 */
export async function loadWorkloadForRemoval(store: WorkloadStore, name: string): Promise<Workload> {
  if (!(await store.workloadNames()).includes(name)) throw unknownWorkload(name);
  const [config, status] = await Promise.all([
    store.readRunConfig(name).catch(() => undefined),
    store.readStatus(name).catch(() => undefined),
  ]);
  return { name, config, status };
}

export function containerNameOf(workload: Workload): string {
  return workload.config?.container_name ?? workload.name;
}

export function isRemote(workload: Workload): boolean {
  return Boolean(workload.config?.remote_url);
}

/** True unless the workload is a remote URL or an aggregate (neither has a container). */
export function hasContainer(workload: Workload): boolean {
  return runsContainer(workload.config);
}

/** True when the container is one Moat created for this workload (never touch anything else). */
export function isWorkloadContainer(info: ContainerInfo, name: string): boolean {
  return info.labels[LABELS.managed] === 'true' && info.labels[LABELS.name] === name;
}

/** The workload's container, when it exists and is ours. */
export async function findContainer(
  runtime: ContainerRuntime,
  workload: Workload,
): Promise<ContainerInfo | undefined> {
  const info = await runtime.inspectContainer(containerNameOf(workload));
  return info && isWorkloadContainer(info, workload.name) ? info : undefined;
}

export function supervisorAlive(status: StatusRecord | undefined): boolean {
  return status !== undefined && isSupervisorProcess(status.process_id, status.process_start);
}

/** The truthful status: the recorded one checked against the supervisor and the container. */
export async function observeStatus(
  workload: Workload,
  runtime: ContainerRuntime | undefined,
): Promise<ReconciledStatus> {
  if (!workload.status) return { status: 'stopped', context: 'no status recorded' };
  let container: Observation['container'] = null;
  if (runtime && hasContainer(workload)) {
    const info = await findContainer(runtime, workload);
    container = info ? { running: info.running, state: info.state } : undefined;
  }
  return reconcileStatus(workload.name, workload.status, {
    supervisorAlive: supervisorAlive(workload.status),
    remote: !hasContainer(workload),
    container,
  });
}

/**
 * Stops a workload: SIGTERM to its supervisor (which closes the proxy and stops the container),
 * then stops the container if it still runs. Records `stopped` unless the workload was removed
 * meanwhile (a foreground run deletes itself when it ends). Stopping a stopped workload is fine.
 */
export async function stopWorkload(
  store: WorkloadStore,
  workload: Workload,
  runtime: () => Promise<ContainerRuntime>,
): Promise<void> {
  const { name, status } = workload;
  if (status && supervisorAlive(status)) {
    await store.updateStatus(
      name,
      { status: 'stopping', context: 'stopping on request' },
      { mustExist: true },
    );
    await terminate(status.process_id, status.process_start);
  }
  if (hasContainer(workload)) {
    const rt = await runtime();
    const info = await findContainer(rt, workload);
    if (info?.running) await rt.stopContainer(info.id);
  }
  // A missing or unreadable status file is left alone (the workload was removed, or rm cleans it up).
  if (status) {
    await store.updateStatus(
      name,
      { status: 'stopped', context: 'stopped on request', process_id: 0 },
      { mustExist: true },
    );
  }
  await announceWorkloadChange({ kind: 'stopped', name });
}

/** SIGTERM, wait for the process to go, SIGKILL after the timeout. */
async function terminate(pid: number, startTime: number | undefined): Promise<void> {
  if (!signal(pid, 'SIGTERM')) return;
  const deadline = Date.now() + SUPERVISOR_STOP_TIMEOUT_MS;
  while (isSupervisorProcess(pid, startTime)) {
    if (Date.now() > deadline) {
      signal(pid, 'SIGKILL');
      return;
    }
    await sleep(100);
  }
}

/** Sends a signal; false when the process is already gone. */
function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** Stops the workload, removes its container and deletes its state (RunConfig, status, log). */
export async function removeWorkload(
  store: WorkloadStore,
  workload: Workload,
  runtime: () => Promise<ContainerRuntime>,
): Promise<void> {
  await stopWorkload(store, workload, runtime);
  if (hasContainer(workload)) {
    const rt = await runtime();
    const info = await findContainer(rt, workload);
    if (info) await rt.removeContainer(info.id);
  }
  // Secrets the workload stored (flag values, OAuth tokens) go with it. Imported here because the
  // outbound OAuth client it loads would otherwise sit in every supervisor that uses this module.
  if (workload.config) {
    const { forgetWorkloadSecrets } = await import('../auth/outbound/workload.js');
    await forgetWorkloadSecrets(workload.config);
  }
  await store.withWorkloadLock(workload.name, () => store.deleteWorkloadFiles(workload.name));
  await announceWorkloadChange({ kind: 'removed', name: workload.name });
}

/**
 * Connects to the runtime once, on first use. The drivers (container specs, ignore files) load
 * then too: `moat list` of remote workloads never needs them.
 */
export function lazyRuntime(): () => Promise<ContainerRuntime> {
  let connecting: Promise<ContainerRuntime> | undefined;
  return () => (connecting ??= import('./drivers.js').then(({ drivers }) => drivers.connectRuntime()));
}

/**
 * Runs `action` for each name, continuing after failures; reports each failure on stderr and
 * throws one error at the end when any failed.
 */
export async function forEachWorkload(
  names: string[],
  stderr: NodeJS.WritableStream,
  action: (name: string) => Promise<void>,
): Promise<void> {
  const failed: string[] = [];
  for (const name of names) {
    try {
      await action(name);
    } catch (err) {
      if (names.length === 1) throw err;
      stderr.write(`Error: ${name}: ${errorMessage(err)}\n`);
      failed.push(name);
    }
  }
  if (failed.length > 0)
    throw runtimeError(`failed for ${failed.length} of ${names.length} workloads: ${failed.join(', ')}`);
}
