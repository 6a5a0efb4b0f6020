/**
 * The workloads page's data and actions, through the same workload APIs `moat list`, `start`,
 * `restart`, `stop` and `rm` use.
 */
import { PassThrough } from 'node:stream';
import type { ContainerRuntime } from '../runtime/types.js';
import type { CliIO } from '../util/io.js';
import {
  loadWorkload,
  loadWorkloadForRemoval,
  removeWorkload,
  stopWorkload,
} from '../workloads/lifecycle.js';
import { listWorkloads, type WorkloadSummary } from '../workloads/list.js';
import type { StatusHistoryEntry } from '../workloads/status.js';
import type { WorkloadStore } from '../workloads/store.js';
import type { WorkloadAction, WorkloadRow, WorkloadsSnapshot } from './shared.js';

const UP = new Set(['running', 'unhealthy']);

export async function workloadsSnapshot(
  store: WorkloadStore,
  runtime: () => Promise<ContainerRuntime>,
): Promise<WorkloadsSnapshot> {
  const { workloads, runtimeProblem } = await listWorkloads(store, runtime);
  const rows = await Promise.all(workloads.map((w) => rowOf(store, w)));
  return runtimeProblem ? { workloads: rows, runtime_problem: runtimeProblem } : { workloads: rows };
}

async function rowOf(store: WorkloadStore, w: WorkloadSummary): Promise<WorkloadRow> {
  const up = UP.has(w.status);
  const history = up ? ((await store.readStatus(w.name).catch(() => undefined))?.history ?? []) : [];
  return {
    name: w.name,
    status: w.status,
    status_context: w.status_context,
    health: up ? (w.status === 'running' ? 'healthy' : 'unhealthy') : '-',
    transport: w.transport,
    url: w.url,
    group: w.group,
    running_since: up ? upSince(history) : '',
    restarts: w.restarts,
  };
}

/** The start of the latest unbroken stretch of running/unhealthy entries in the history. */
function upSince(history: readonly StatusHistoryEntry[]): string {
  let since = '';
  for (let i = history.length - 1; i >= 0 && UP.has(history[i]!.status); i--) since = history[i]!.at;
  return since;
}

/**
 * Runs one action the way its CLI command does; returns what the command would print. Failures
 * are thrown as the CLI's errors (a usage error for an unknown workload).
 */
export async function runWorkloadAction(
  store: WorkloadStore,
  name: string,
  action: WorkloadAction,
  runtime: () => Promise<ContainerRuntime>,
): Promise<string> {
  switch (action) {
    case 'stop':
      await stopWorkload(store, await loadWorkload(store, name), runtime);
      return `Stopped ${name}`;
    case 'remove':
      await removeWorkload(store, await loadWorkloadForRemoval(store, name), runtime);
      return `Removed ${name}`;
    case 'start':
    case 'restart': {
      // Loaded on first use, as the CLI does: the supervisor launch and the secrets.
      const { startSavedWorkload } = await import('../workloads/start.js');
      const { io, text } = capturedIO();
      await startSavedWorkload(store, name, action, io, runtime);
      return text().trim();
    }
  }
}

/** An IO whose output is kept as text (progress displays see no terminal and stay quiet). */
function capturedIO(): { io: CliIO; text: () => string } {
  const chunks: string[] = [];
  const sink = () => {
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
    return stream;
  };
  return { io: { stdout: sink(), stderr: sink() }, text: () => chunks.join('') };
}
