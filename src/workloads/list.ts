/**
 * What `moat list` shows: every workload with its truthful status (the status file reconciled
 * with the supervisor process and the container).
 */
import type { ContainerRuntime } from '../runtime/types.js';
import { errorMessage } from '../util/errors.js';
import { loadWorkload, observeStatus, isRemote } from './lifecycle.js';
import type { WorkloadStatus } from './status.js';
import { DEFAULT_GROUP, type WorkloadStore } from './store.js';

/** One row of `moat list --format json` (documented in docs/workloads.md). */
export interface WorkloadSummary {
  name: string;
  status: WorkloadStatus;
  status_context: string;
  /** Server transport: stdio, sse or streamable-http. */
  transport: string;
  /** What clients speak to the proxy: streamable-http or sse. */
  proxy_mode: string;
  /** The MCP endpoint clients use; empty while the workload has never run. */
  url: string;
  port: number;
  group: string;
  /** The image, or the remote URL for remote workloads. */
  package: string;
  remote: boolean;
  created_at: string;
  updated_at: string;
  /** Container restarts after crashes in the current run. */
  restarts: number;
}

export interface ListResult {
  workloads: WorkloadSummary[];
  /** Set when the container runtime could not be asked; statuses then rest on the supervisor alone. */
  runtimeProblem?: string;
}

export async function listWorkloads(
  store: WorkloadStore,
  connectRuntime: () => Promise<ContainerRuntime>,
): Promise<ListResult> {
  const workloads = (
    await Promise.all((await store.workloadNames()).map((n) => loadWorkload(store, n).catch(() => undefined)))
  ).filter((w) => w !== undefined);
  let runtime: ContainerRuntime | undefined;
  let runtimeProblem: string | undefined;
  if (workloads.some((w) => !isRemote(w))) {
    runtime = await connectRuntime().catch((err: unknown) => {
      runtimeProblem = errorMessage(err);
      return undefined;
    });
  }
  const rows = await Promise.all(
    workloads.map(async (w): Promise<WorkloadSummary> => {
      const seen = await observeStatus(w, runtime);
      const config = w.config;
      return {
        name: w.name,
        status: seen.status,
        status_context: seen.context,
        transport: config?.transport ?? '',
        proxy_mode: config?.transport === 'sse' ? 'sse' : (config?.proxy_mode ?? 'streamable-http'),
        url: w.status?.url ?? '',
        port: w.status?.port ?? config?.port ?? 0,
        group: config?.group ?? DEFAULT_GROUP,
        package: config?.remote_url ?? config?.image ?? '',
        remote: isRemote(w),
        created_at: w.status?.created_at ?? '',
        updated_at: w.status?.updated_at ?? '',
        restarts: w.status?.restarts ?? 0,
      };
    }),
  );
  return { workloads: rows.sort((a, b) => a.name.localeCompare(b.name)), runtimeProblem };
}
