/**
 * The supervise path of an aggregate (`moat group serve`, a RunConfig with `aggregate`): the
 * in-process aggregator (src/aggregate/) merges the members of the group, each reached through its
 * own proxy; the workload's proxy fronts the aggregator with every policy of the RunConfig. No
 * container. On stop the proxy closes first (no new requests), then the aggregator.
 */
import { groupOf, sessionTtlMs } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { errorMessage } from '../util/errors.js';
import { log } from '../util/log.js';
import { drivers } from './drivers.js';
import { supervisorAlive } from './lifecycle.js';
import { reconcileStatus } from './status.js';
import type { WorkloadStore } from './store.js';
import { running, untilAborted, type Recorder } from './supervise-shared.js';

/** One member as the aggregator sees it (src/aggregate's AggregateMember). */
export interface GroupMember {
  name: string;
  url: string;
  healthy: boolean;
}

/**
 * The members of `group` now, read from the store: every workload of the group with a proxy URL,
 * except `self` and any aggregate (an aggregate never serves itself nor another aggregate).
 * Healthy means running with its supervisor alive; a member whose state cannot be read is left out.
 */
export async function groupMembers(
  store: WorkloadStore,
  group: string,
  self: string,
): Promise<GroupMember[]> {
  const members: GroupMember[] = [];
  for (const name of await store.workloadNames()) {
    if (name === self) continue;
    const [config, status] = await Promise.all([
      store.readRunConfig(name).catch(() => undefined),
      store.readStatus(name).catch(() => undefined),
    ]);
    if (!config || config.aggregate || groupOf(config) !== group || !status?.url) continue;
    const seen = reconcileStatus(name, status, {
      supervisorAlive: supervisorAlive(status),
      remote: true, // the container is not looked at: the member's proxy answering is what counts
      container: null,
    });
    members.push({ name, url: status.url, healthy: seen.status === 'running' });
  }
  return members;
}

/**
 * How often the aggregate reads its members' status. A crashed container is restarted after at
 * least DEFAULT_RESTART_POLICY.initialDelayMs (1 s, supervisor.ts) plus the container's start, and
 * is `restarting` meanwhile: read at most half that apart, no crash-and-restart goes unseen, so a
 * killed member's tools are always withdrawn (with `list_changed`) until it is back. The
 * aggregator's own default (2 s) could miss it. Each read is the store's files and a TCP probe
 * per member.
 */
export const MEMBER_REFRESH_MS = 500;

export interface AggregateSuperviseOptions {
  store: WorkloadStore;
  signal: AbortSignal;
  onReady?: (url: string, metricsUrl?: string) => void;
}

export async function superviseAggregate(
  config: RunConfig & { aggregate: NonNullable<RunConfig['aggregate']> },
  options: AggregateSuperviseOptions,
  record: Recorder,
): Promise<{ outcome: 'stopped' }> {
  const { group, naming } = config.aggregate;
  await record({ status: 'starting', context: `starting the aggregator of group "${group}"` });
  // Loaded here: only an aggregate's supervisor needs the aggregator.
  const { startAggregator } = await import('../aggregate/index.js');
  const aggregator = await startAggregator({
    members: () => groupMembers(options.store, group, config.name),
    ...(naming ? { naming } : {}),
    refreshMs: MEMBER_REFRESH_MS,
    // The front forgets an idle session after session_ttl; the aggregator forgets its side then too.
    sessionIdleMs: sessionTtlMs(config),
  });
  try {
    const proxy = await drivers.startProxy(config, {
      kind: 'http',
      url: aggregator.url,
      transport: 'streamable-http',
      remote: false,
      // Cedar's context.backend, audit's target.backend and spans' moat.backend name the member.
      memberOf: aggregator.memberOf,
    });
    try {
      await record(running(proxy, `serving group "${group}" as one endpoint`));
      log().info({ workload: config.name, url: proxy.endpoint, group }, 'workload running');
      options.onReady?.(proxy.endpoint, proxy.metricsUrl);
      await untilAborted(options.signal);
      await record({ status: 'stopping', context: 'stopping on request' });
    } finally {
      await proxy.close();
    }
  } finally {
    await aggregator
      .close()
      .catch((err: unknown) => log().warn({ err: errorMessage(err) }, 'closing the aggregator failed'));
  }
  return { outcome: 'stopped' };
}
