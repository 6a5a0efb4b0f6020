/**
 * What each group offers its registered clients. Today one source: every live workload of the
 * group, at its proxy URL. An aggregate endpoint (one URL for a whole group) becomes a second
 * source here; the sync and the files do not change.
 */
import { configuresInboundAuth } from '../auth/inbound/settings.js';
import { lazyRuntime } from '../workloads/lifecycle.js';
import { listWorkloads } from '../workloads/list.js';
import type { WorkloadStore } from '../workloads/store.js';
import type { Endpoint } from './types.js';

/** Statuses whose proxy is serving (or about to, after a crash restart): their URL stays in the files. */
const LIVE = new Set(['running', 'unhealthy', 'restarting']);

export type EndpointSource = (store: WorkloadStore) => Promise<Map<string, Endpoint[]>>;

/** Group → the endpoints of its live workloads. */
export const workloadEndpoints: EndpointSource = async (store) => {
  const { workloads } = await listWorkloads(store, lazyRuntime());
  const byGroup = new Map<string, Endpoint[]>();
  for (const w of workloads) {
    if (!LIVE.has(w.status) || !w.url) continue;
    const config = await store.readSavedRunConfig(w.name).catch(() => undefined);
    const endpoint: Endpoint = {
      name: w.name,
      url: w.url,
      transport: w.proxy_mode === 'sse' ? 'sse' : 'streamable-http',
      requiresAuth: configuresInboundAuth(config?.oidc_config),
    };
    byGroup.set(w.group, [...(byGroup.get(w.group) ?? []), endpoint]);
  }
  return byGroup;
};

const SOURCES: readonly EndpointSource[] = [workloadEndpoints];

/** Group → every endpoint all sources offer it. */
export async function groupEndpoints(store: WorkloadStore): Promise<Map<string, Endpoint[]>> {
  const merged = new Map<string, Endpoint[]>();
  for (const source of SOURCES) {
    for (const [group, endpoints] of await source(store)) {
      merged.set(group, [...(merged.get(group) ?? []), ...endpoints]);
    }
  }
  return merged;
}
