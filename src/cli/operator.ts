/**
 * `moat operator`: the Kubernetes operator for MCPRemoteProxy and its referenced kinds, in the
 * foreground until SIGTERM. `main.ts` routes here without loading the command tree, like `moat
 * proxy`. The kubeconfig is the in-cluster ServiceAccount when run in a pod, else $KUBECONFIG or
 * ~/.kube/config (client-node's default loading).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { startOperator } from '../operator/main.js';
import { usageError } from '../util/errors.js';
import { processIO, type CliIO } from '../util/io.js';
import { createLogger, setLogger } from '../util/log.js';
import { runUntilStopped } from './exit.js';
import { packageVersion } from './version.js';

export const OPERATOR_USAGE = `Usage: moat operator [options]

Run the Kubernetes operator: reconcile MCPRemoteProxy resources (and MCPOIDCConfig, MCPAuthzConfig,
MCPExternalAuthConfig, MCPTelemetryConfig, MCPToolConfig, MCPGroup) into proxy Deployments.
Stops on SIGTERM or SIGINT.

Options:
  --namespace <ns>           watch only this namespace; repeat for several (default: all)
  --leader-elect <bool>      elect a leader with Leases so replicas never reconcile twice (default: true)
  --lease-namespace <ns>     where the Leases live (default: $POD_NAMESPACE, else "default")
  --probe-port <port>        port of /healthz, /readyz and /metrics (default: 8081)
  --probe-host <addr>        address they listen on (default: 0.0.0.0)
  --proxy-image <image>      image of the proxy pods (default: mcp-moat:<this version>)
  --log-level <level>        trace, debug, info, warn or error (default: info)
  -h, --help                 show this help
`;

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export interface OperatorFlags {
  namespaces?: string[];
  leaderElect: boolean;
  leaseNamespace: string;
  probePort: number;
  probeHost: string;
  proxyImage: string;
  logLevel: LogLevel;
}

/** The flags, checked; undefined when help was asked for. */
export function parseOperatorFlags(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): OperatorFlags | undefined {
  const flags: OperatorFlags = {
    leaderElect: true,
    leaseNamespace: env.POD_NAMESPACE || 'default',
    probePort: 8081,
    probeHost: '0.0.0.0',
    proxyImage: `mcp-moat:${packageVersion()}`,
    logLevel: 'info',
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-h' || arg === '--help') return undefined;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 ? arg.slice(eq + 1) : args[++i];
      if (v === undefined || v === '') throw usageError(`moat operator: ${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--namespace':
        flags.namespaces = [...(flags.namespaces ?? []), value()];
        break;
      case '--leader-elect': {
        const v = value();
        if (v !== 'true' && v !== 'false') {
          throw usageError(`moat operator: --leader-elect must be true or false, not ${JSON.stringify(v)}`);
        }
        flags.leaderElect = v === 'true';
        break;
      }
      case '--lease-namespace':
        flags.leaseNamespace = value();
        break;
      case '--probe-port': {
        const v = value();
        const port = Number(v);
        if (!/^\d+$/.test(v) || port > 65535) {
          throw usageError(
            `moat operator: --probe-port must be a port number 0-65535, not ${JSON.stringify(v)}`,
          );
        }
        flags.probePort = port;
        break;
      }
      case '--probe-host':
        flags.probeHost = value();
        break;
      case '--proxy-image':
        flags.proxyImage = value();
        break;
      case '--log-level': {
        const v = value();
        if (!LOG_LEVELS.includes(v as LogLevel)) {
          throw usageError(
            `moat operator: --log-level must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(v)}`,
          );
        }
        flags.logLevel = v as LogLevel;
        break;
      }
      default:
        throw usageError(`moat operator: unknown option ${JSON.stringify(arg)}; see moat operator --help`);
    }
  }
  return flags;
}

/**
 * client-node's default loading: $KUBECONFIG, ~/.kube/config, else the pod's ServiceAccount. When
 * none exists it silently falls back to http://localhost:8080, which would only fail later and
 * vaguely, so that case is a usage error here.
 */
export function loadKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster || (cluster.name === 'cluster' && cluster.server === 'http://localhost:8080')) {
    throw usageError(
      'moat operator: no Kubernetes configuration found; run it in a pod with a ServiceAccount, or set KUBECONFIG (or ~/.kube/config)',
    );
  }
  return kubeConfig;
}

export function runOperatorCommand(args: readonly string[], io: CliIO = processIO): Promise<number> {
  return runUntilStopped(async (stopped) => {
    const flags = parseOperatorFlags(args);
    if (!flags) {
      io.stdout.write(OPERATOR_USAGE);
      return 0;
    }
    const logger = createLogger(false);
    logger.level = flags.logLevel;
    setLogger(logger);
    const kubeConfig = loadKubeConfig();
    const operator = await startOperator({
      kubeConfig,
      namespaces: flags.namespaces,
      leaderElection: flags.leaderElect ? { namespace: flags.leaseNamespace } : false,
      probePort: flags.probePort,
      probeHost: flags.probeHost,
      proxyImage: flags.proxyImage,
      log: logger,
      version: packageVersion(),
    });
    logger.info({ probePort: operator.probePort, namespaces: flags.namespaces ?? 'all' }, 'operator started');
    if (!stopped.aborted) {
      await new Promise((resolve) => stopped.addEventListener('abort', resolve, { once: true }));
    }
    await operator.stop();
    logger.info('operator stopped');
    return 0;
  }, io);
}
