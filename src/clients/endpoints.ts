/**
 * What each group offers its registered clients: every live workload of the group, at its proxy
 * URL — unless the group is served as one endpoint (`moat group serve`): then its clients get the
 * aggregate alone, since the members' tools are already in it and listing both would show every
 * tool twice. Another source (e.g. a remote catalog) would be a second EndpointSource; the sync
 * and the files do not change.
 */
import { configuresInboundAuth } from '../auth/inbound/settings.js';
import { lazyRuntime } from '../workloads/lifecycle.js';
import { listWorkloads } from '../workloads/list.js';
import type { WorkloadStore } from '../workloads/store.js';
import type { Endpoint } from './types.js';

/** Statuses whose proxy is serving (or about to, after a crash restart): their URL stays in the files. */
const LIVE = new Set(['running', 'unhealthy', 'restarting']);

export type EndpointSource = (store: WorkloadStore) => Promise<Map<string, Endpoint[]>>;

/** A live workload's endpoint, its group, and the group it serves as one endpoint if it is an aggregate. */
export interface OfferedEndpoint {
  group: string;
  endpoint: Endpoint;
  aggregates?: string;
}

/** Group → its endpoints: a group with a live aggregate of itself among them offers only that. */
export function endpointsByGroup(offered: readonly OfferedEndpoint[]): Map<string, Endpoint[]> {
  const byGroup = new Map<string, Endpoint[]>();
  const servedWhole = new Set(offered.filter((o) => o.aggregates === o.group).map((o) => o.group));
  for (const { group, endpoint, aggregates } of offered) {
    if (servedWhole.has(group) && aggregates !== group) continue;
    byGroup.set(group, [...(byGroup.get(group) ?? []), endpoint]);
  }
  return byGroup;
}

/** Group → the endpoints of its live workloads. */
export const workloadEndpoints: EndpointSource = async (store) => {
  const { workloads } = await listWorkloads(store, lazyRuntime());
  const offered: OfferedEndpoint[] = [];
  for (const w of workloads) {
    if (!LIVE.has(w.status) || !w.url) continue;
    const config = await store.readSavedRunConfig(w.name).catch(() => undefined);
    const endpoint: Endpoint = {
      name: w.name,
      url: w.url,
      transport: w.proxy_mode === 'sse' ? 'sse' : 'streamable-http',
      requiresAuth: configuresInboundAuth(config?.oidc_config),
    };
    offered.push({
      group: w.group,
      endpoint,
      ...(config?.aggregate ? { aggregates: config.aggregate.group } : {}),
    });
  }
  return endpointsByGroup(offered);
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
