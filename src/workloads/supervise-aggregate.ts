/**
 * The supervise path of an aggregate (`moat group serve`, a RunConfig with `aggregate`): the
 * in-process aggregator (src/aggregate/) merges the members of the group, each reached through its
 * own proxy; the workload's proxy fronts the aggregator with every policy of the RunConfig. No
 * container. On stop the proxy closes first (no new requests), then the aggregator.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { groupOf, sessionTtlMs } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { errorMessage, runtimeError, usageError } from '../util/errors.js';
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

/** Replicas of an aggregate on different machines share this key (≥ 16 bytes) through the environment. */
export const SESSION_KEY_ENV = 'MOAT_AGGREGATE_SESSION_KEY';

/**
 * The key sealing the aggregator's session ids: the environment's, or the group's own key file
 * (made once, mode 0600, beside the group's record), so every aggregate of a group on this machine —
 * replicas sharing sessions through Redis — rebuilds the others' sessions (src/aggregate/session-id.ts).
 */
export async function aggregateSessionKey(store: WorkloadStore, group: string): Promise<Buffer> {
  const fromEnv = process.env[SESSION_KEY_ENV];
  if (fromEnv !== undefined) {
    if (Buffer.byteLength(fromEnv) < 16) throw usageError(`${SESSION_KEY_ENV} must be at least 16 bytes`);
    return Buffer.from(fromEnv);
  }
  const path = store.aggregateKeyPath(group);
  // Written whole under another name, then linked: the key file appears complete or not at all,
  // and of two aggregates starting at once the first link wins and both read its key.
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 }); // the implicit default group has no file yet
  await writeFile(draft, randomBytes(32), { mode: 0o600 });
  try {
    await link(draft, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(draft, { force: true });
  }
  const key = await readFile(path);
  if (key.length < 16)
    throw runtimeError(`${path} holds no session key; remove it and start the aggregate again`);
  return key;
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
    sessionKey: await aggregateSessionKey(options.store, group),
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
