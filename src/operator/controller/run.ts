/**
 * `runController`: informers feed a de-duplicating work queue; workers call the caller's
 * `reconcile(key)` only while this instance leads; a failure is logged, counted and retried with
 * backoff; probes and metrics are served; shutdown (SIGTERM/SIGINT when asked) stops the informers,
 * drains the queue within a bound, releases the lease and closes the HTTP server, in that order, so
 * no reconcile runs after the lease is given up.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { log as rootLog } from '../../util/log.js';
import { KubeClient } from './client.js';
import { EventRecorder } from './events.js';
import { startProbeServer, type ProbeServer } from './http.js';
import { LeaderElector, defaultIdentity } from './leader.js';
import { controllerMetrics, type ControllerMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import { objectKey, type ResourceType } from './resource.js';
import { Watches, controllerOwnerKey, selfKey, type CacheReader, type WatchSource } from './watch.js';

export interface ReconcileResult {
  /** Reconcile this key again after this many ms (e.g. to poll something not watched). */
  requeueAfter?: number;
}

export interface ReconcileContext {
  /** The informers' view: read the primary and related objects here, not from the API server. */
  cache: CacheReader;
  client: KubeClient;
  events: EventRecorder;
  log: Logger;
}

/** Reconciles the primary named by `key` (`namespace/name`); throwing means "retry with backoff". */
export type Reconciler = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult | void>;

export interface LeaderElectionConfig {
  /** Where the Lease lives, usually the operator's own namespace. */
  namespace: string;
  /** The Lease's name; defaults to `<controller name>-leader`. */
  leaseName?: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ControllerOptions {
  /** Names the controller in logs, metrics and the default Lease name. */
  name: string;
  kubeConfig: KubeConfig;
  /** The kind reconciled; its keys are the queue's keys. */
  primary: ResourceType;
  /** Kinds the primary controls (owner reference with controller=true): a change requeues the owner. */
  owns?: ResourceType[];
  /** Other kinds whose change requeues the primaries `toKeys` returns (e.g. those naming a Secret). */
  watches?: WatchSource[];
  /** Namespaces to watch; undefined watches all. */
  namespaces?: string[];
  reconcile: Reconciler;
  workers?: number;
  backoff?: { baseMs?: number; maxMs?: number };
  /** false runs without election (a single replica, or tests). */
  leaderElection: LeaderElectionConfig | false;
  /**
   * Metrics shared with the other controllers of the process (their series differ by the
   * `controller` label); a fresh set when unset.
   */
  metrics?: ControllerMetrics;
  /** The /healthz, /readyz and /metrics listener; false for none. Port 0 picks a free port. */
  probes?: { port: number; host?: string } | false;
  /** Bound on waiting for the informers before workers start; retried while leading. */
  syncTimeoutMs?: number;
  /** Bound on draining running reconciles at shutdown. */
  shutdownTimeoutMs?: number;
  /** Stop on SIGTERM/SIGINT, then exit the process. For the operator's main, not for tests. */
  handleSignals?: boolean;
  log?: Logger;
  version?: string;
}

export interface Controller {
  readonly name: string;
  readonly identity: string;
  readonly metrics: ControllerMetrics;
  readonly cache: CacheReader;
  /** The port /healthz, /readyz and /metrics listen on, when enabled. */
  readonly probePort: number | undefined;
  isLeader(): boolean;
  /** Informers that have not listed and watched yet, one line each; empty when ready. */
  notReady(): string[];
  /** Resolves when every informer has synced; rejects after `timeoutMs` naming those that have not. */
  waitForSync(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Throws a message naming the field and what is allowed; nothing has started yet. */
function checkOptions(options: ControllerOptions): void {
  const { namespaces } = options;
  if (namespaces && namespaces.length === 0) {
    throw new Error('namespaces: list at least one namespace, or leave it unset to watch all');
  }
  const bad = namespaces?.find((ns) => !DNS_LABEL.test(ns));
  if (bad !== undefined) {
    throw new Error(
      `namespaces: "${bad}" is not a namespace name (lower-case letters, digits and "-", at most 63)`,
    );
  }
  if (!DNS_LABEL.test(options.name)) {
    throw new Error(
      `name: "${options.name}" must be lower-case letters, digits and "-" (it names the Lease)`,
    );
  }
}

export async function runController(options: ControllerOptions): Promise<Controller> {
  checkOptions(options);
  const { name, primary } = options;
  const log = (options.log ?? rootLog()).child({ controller: name });
  const election = options.leaderElection;
  const identity = (election && election.identity) || defaultIdentity();
  const client = new KubeClient(options.kubeConfig);
  const metrics = options.metrics ?? controllerMetrics(options.version ?? 'dev');
  metrics.leader.set(0, { controller: name });
  const events = new EventRecorder({ client, log, instance: identity });
  const syncTimeoutMs = options.syncTimeoutMs ?? 60_000;
  let stopping: Promise<void> | undefined;
  let leading = false;

  const queue: WorkQueue = new WorkQueue({
    workers: options.workers,
    baseDelayMs: options.backoff?.baseMs,
    maxDelayMs: options.backoff?.maxMs,
    handle: async (key) => {
      const started = performance.now();
      try {
        const result = await options.reconcile(key, {
          cache: watches,
          client,
          events,
          log: log.child({ key }),
        });
        const outcome = result?.requeueAfter !== undefined ? 'requeue' : 'success';
        metrics.reconciles.inc({ controller: name, result: outcome });
        log.debug({ key, result: outcome, ms: Math.round(performance.now() - started) }, 'reconciled');
        return result;
      } catch (err) {
        metrics.reconciles.inc({ controller: name, result: 'error' });
        throw err;
      } finally {
        metrics.duration.observe((performance.now() - started) / 1000, { controller: name });
      }
    },
    onFailure: (key, err, retryInMs) => {
      metrics.retries.inc({ controller: name });
      log.error(
        { key, err: err instanceof Error ? err.message : String(err), retryInMs },
        'reconcile failed',
      );
    },
  });
  metrics.depth.collect(() => queue.depth, { controller: name });
  metrics.reconciles.inc({ controller: name, result: 'success' }, 0);
  metrics.reconciles.inc({ controller: name, result: 'error' }, 0);
  metrics.retries.inc({ controller: name }, 0);

  const watches: Watches = new Watches({
    kubeConfig: options.kubeConfig,
    namespaces: options.namespaces,
    log,
    enqueue: (key) => queue.add(key),
    sources: [
      { type: primary, toKeys: selfKey },
      ...(options.owns ?? []).map((type) => ({ type, toKeys: controllerOwnerKey(primary) })),
      ...(options.watches ?? []),
    ],
  });

  /** Workers start once the caches are complete, and every primary is looked at afresh (level-based). */
  const startWorking = async (): Promise<void> => {
    while (leading && !stopping) {
      try {
        await watches.waitForSync(syncTimeoutMs);
        break;
      } catch (err) {
        log.error({ err: (err as Error).message }, 'waiting for informers before reconciling');
      }
    }
    if (!leading || stopping) return;
    for (const obj of watches.list(primary)) queue.add(objectKey(obj));
    queue.start();
  };

  const elector = election
    ? new LeaderElector({
        kubeConfig: options.kubeConfig,
        namespace: election.namespace,
        name: election.leaseName ?? `${name}-leader`,
        identity,
        leaseDurationMs: election.leaseDurationMs,
        renewDeadlineMs: election.renewDeadlineMs,
        retryPeriodMs: election.retryPeriodMs,
        log,
        onStartedLeading: () => {
          leading = true;
          metrics.leader.set(1, { controller: name });
          void startWorking();
        },
        onStoppedLeading: () => {
          leading = false;
          metrics.leader.set(0, { controller: name });
          void queue.pause(options.shutdownTimeoutMs ?? 10_000);
        },
      })
    : undefined;

  let probes: ProbeServer | undefined;
  if (options.probes !== false) {
    probes = await startProbeServer({
      port: options.probes?.port ?? 8081,
      host: options.probes?.host,
      registry: metrics.registry,
      notReady: () => watches.notSynced(),
    });
  }

  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'shutting down');
    void stop().then(() => process.exit(0));
  };

  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      await watches.stop();
      const drained = await queue.shutdown(options.shutdownTimeoutMs ?? 10_000);
      if (!drained) log.warn('reconciles still running at the shutdown bound; stopping anyway');
      await elector?.stop();
      leading = false;
      metrics.leader.set(0, { controller: name });
      await probes?.close();
      log.info('controller stopped');
    })());

  if (options.handleSignals) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  watches.start();
  log.info(
    { identity, namespaces: options.namespaces ?? 'all', probePort: probes?.port },
    'controller started',
  );
  if (elector) elector.start();
  else {
    leading = true;
    metrics.leader.set(1, { controller: name });
    void startWorking();
  }

  return {
    name,
    identity,
    metrics,
    cache: watches,
    probePort: probes?.port,
    isLeader: () => leading,
    notReady: () => watches.notSynced(),
    waitForSync: (timeoutMs) => watches.waitForSync(timeoutMs),
    stop,
  };
}
