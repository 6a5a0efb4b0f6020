/**
 * The operator process: one controller for MCPRemoteProxy and one per referenced kind, all in this
 * process on the controller machinery of ./controller. Each controller elects its own leader with
 * its own Lease (`moat-<kind>-leader`), so two operator replicas split nothing by accident: for
 * each kind exactly one reconciles. One probe server covers them all: /readyz waits for every
 * controller's informers and /metrics shows every controller's series.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { log as rootLog } from '../util/log.js';
import { startProbeServer, type ProbeServer } from './controller/http.js';
import { controllerMetrics } from './controller/metrics.js';
import { runController, type Controller, type LeaderElectionConfig } from './controller/run.js';
import type { WatchSource } from './controller/watch.js';
import type { OperatorOptions } from './reconcile/inputs.js';
import { configKindReconciler, referencedBy } from './reconcilers/config-kind.js';
import { CONFIG_MAPS, REMOTE_PROXIES, SECRETS } from './reconcilers/kinds.js';
import { REFERENCED_TYPES, proxiesReferencing } from './reconcilers/references.js';
import { PROXY_OWNED_TYPES, remoteProxyReconciler } from './reconcilers/remote-proxy.js';

export interface OperatorSettings extends OperatorOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to watch; undefined watches all. */
  namespaces?: string[];
  /** Where the Leases live; false runs without leader election (one replica only). */
  leaderElection: Omit<LeaderElectionConfig, 'leaseName'> | false;
  /** Port of /healthz, /readyz and /metrics; 0 picks a free one. */
  probePort: number;
  probeHost?: string;
  log?: Logger;
  version: string;
}

export interface Operator {
  readonly controllers: readonly Controller[];
  readonly probePort: number;
  stop(): Promise<void>;
}

function watchOf(type: WatchSource['type']): WatchSource {
  return { type, toKeys: (obj, cache) => proxiesReferencing(type, obj, cache) };
}

export async function startOperator(settings: OperatorSettings): Promise<Operator> {
  const log = settings.log ?? rootLog();
  const metrics = controllerMetrics(settings.version);
  const common = {
    kubeConfig: settings.kubeConfig,
    namespaces: settings.namespaces,
    log,
    version: settings.version,
    metrics,
    probes: false as const,
  };
  const election = (name: string) =>
    settings.leaderElection ? { ...settings.leaderElection, leaseName: `${name}-leader` } : (false as const);
  const controllers: Controller[] = [];
  let probes: ProbeServer | undefined;
  const stopAll = async () => {
    for (const c of [...controllers].reverse()) await c.stop();
    await probes?.close();
  };
  try {
    controllers.push(
      await runController({
        ...common,
        name: 'moat-mcpremoteproxy',
        primary: REMOTE_PROXIES,
        owns: PROXY_OWNED_TYPES,
        watches: [...REFERENCED_TYPES, CONFIG_MAPS, SECRETS].map(watchOf),
        reconcile: remoteProxyReconciler({
          proxyImage: settings.proxyImage,
          defaultImagePullSecrets: settings.defaultImagePullSecrets,
        }),
        leaderElection: election('moat-mcpremoteproxy'),
      }),
    );
    for (const type of REFERENCED_TYPES) {
      const name = `moat-${type.kind.toLowerCase()}`;
      controllers.push(
        await runController({
          ...common,
          name,
          primary: type,
          watches: [{ type: REMOTE_PROXIES, toKeys: referencedBy(type) }],
          reconcile: configKindReconciler(type),
          leaderElection: election(name),
        }),
      );
    }
    probes = await startProbeServer({
      port: settings.probePort,
      host: settings.probeHost,
      registry: metrics.registry,
      notReady: () => controllers.flatMap((c) => c.notReady().map((reason) => `${c.name}: ${reason}`)),
    });
  } catch (err) {
    await stopAll();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopAll());
  return { controllers, probePort: probes.port, stop };
}
