/**
 * What `moat list` shows: every workload with its truthful status (the status file reconciled
 * with the supervisor process and the container).
 */
import { DEFAULTS } from '../config/defaults.js';
import { clientTransport, groupOf } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import type { ContainerRuntime } from '../runtime/types.js';
import { errorMessage } from '../util/errors.js';
import { hasContainer, loadWorkload, observeStatus, isRemote, type Workload } from './lifecycle.js';
import type { WorkloadStatus } from './status.js';
import { type WorkloadStore } from './store.js';

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
  /** The image, the remote URL for remote workloads, `aggregate:<group>` for an aggregate. */
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
  const loaded = await Promise.all((await store.workloadNames()).map((n) => loadForList(store, n)));
  const workloads: Workload[] = [];
  const unreadable: Unreadable[] = [];
  for (const entry of loaded) {
    if (entry && 'problem' in entry) unreadable.push(entry);
    else if (entry) workloads.push(entry);
  }
  let runtime: ContainerRuntime | undefined;
  let runtimeProblem: string | undefined;
  if (workloads.some(hasContainer)) {
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
        proxy_mode: config ? clientTransport(config) : DEFAULTS.proxyMode,
        url: w.status?.url ?? '',
        port: w.status?.port ?? config?.port ?? 0,
        group: groupOf(config),
        package: packageOf(config),
        remote: isRemote(w),
        created_at: w.status?.created_at ?? '',
        updated_at: w.status?.updated_at ?? '',
        restarts: w.status?.restarts ?? 0,
      };
    }),
  );
  rows.push(...unreadable.map(unreadableRow));
  return { workloads: rows.sort((a, b) => a.name.localeCompare(b.name)), runtimeProblem };
}

interface Unreadable {
  name: string;
  problem: string;
}

/** A workload whose state cannot be read is still listed (status unknown, with the reason), never hidden. */
async function loadForList(store: WorkloadStore, name: string): Promise<Workload | Unreadable | undefined> {
  try {
    // Listing shows the RunConfig as saved (normalized by the schema when it was written); the
    // commands that start a workload validate it again.
    return await loadWorkload(store, name, { validate: false });
  } catch (err) {
    // Removed meanwhile by another moat process: nothing to show.
    if (!(await store.workloadNames()).includes(name)) return undefined;
    return { name, problem: errorMessage(err) };
  }
}

function unreadableRow({ name, problem }: Unreadable): WorkloadSummary {
  return {
    name,
    status: 'unknown',
    status_context: `cannot read its state: ${problem}`,
    transport: '',
    proxy_mode: '',
    url: '',
    port: 0,
    group: '',
    package: '',
    remote: false,
    created_at: '',
    updated_at: '',
    restarts: 0,
  };
}

/** What `moat list` shows as a workload's package. */
function packageOf(config: RunConfig | undefined): string {
  if (config?.aggregate) return `aggregate:${config.aggregate.group}`;
  return config?.remote_url ?? config?.image ?? '';
}
