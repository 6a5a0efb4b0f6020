/**
 * `moat proxy --config FILE`: the proxy for a remote MCP server, in the foreground, from a RunConfig
 * alone. It is what an operator-managed pod runs (the RunConfig comes from a ConfigMap, secrets
 * from the environment), and it keeps no workload state. Logs are JSON lines on stderr unless a
 * terminal is attached. SIGTERM or SIGINT closes the listener, lets answers in flight finish, and
 * exits 0. `main.ts` routes here without loading the command tree, like `moat supervise`.
 */
import { readRunConfigFile } from '../config/runconfig-file.js';
import { usageError } from '../util/errors.js';
import { startIdleMemoryReducer } from '../util/idle-memory.js';
import { processIO, type CliIO } from '../util/io.js';
import { log } from '../util/log.js';
import { runUntilStopped } from './exit.js';

export const PROXY_USAGE = `Usage: moat proxy --config <file>

Run the proxy for a remote MCP server in the foreground, from a RunConfig alone (its remote_url,
policies and session store); secrets come from the environment (MOAT_SECRETS_PROVIDER=environment,
MOAT_SECRET_<NAME>, MOAT_SESSION_REDIS_PASSWORD). Kubernetes pods made by the operator run this.
Stops on SIGTERM or SIGINT.

Options:
  --config <file>  the RunConfig (JSON) to run
  -h, --help       show this help
`;

/** The RunConfig path from the arguments; undefined when help was asked for. */
export function proxyConfigPath(args: readonly string[]): string | undefined {
  let path: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-h' || arg === '--help') return undefined;
    if (arg === '--config' && i + 1 < args.length) path = args[++i];
    else if (arg.startsWith('--config=')) path = arg.slice('--config='.length);
    else throw usageError(`moat proxy: unexpected argument ${JSON.stringify(arg)}; use --config <file>`);
  }
  if (!path) throw usageError('moat proxy: --config <file> is required (the RunConfig to run)');
  return path;
}

export function runProxyCommand(args: readonly string[], io: CliIO = processIO): Promise<number> {
  return runUntilStopped(async (stopped) => {
    const path = proxyConfigPath(args);
    if (path === undefined) {
      io.stdout.write(PROXY_USAGE);
      return 0;
    }
    const config = await readRunConfigFile(path);
    if (config.remote_url === undefined) {
      throw usageError(
        `${path}: moat proxy fronts a remote server and needs remote_url; run a container workload with moat run --from-config`,
      );
    }
    const [{ startProxy }, { remoteBackend }] = await Promise.all([
      import('../proxy/index.js'),
      import('../proxy/backend.js'),
    ]);
    const proxy = await startProxy(config, remoteBackend(config), { interactiveAuth: false });
    log().info({ url: proxy.endpoint, remote: config.remote_url }, 'proxy ready');
    const stopReducer = startIdleMemoryReducer();
    if (!stopped.aborted) {
      await new Promise((resolve) => stopped.addEventListener('abort', resolve, { once: true }));
    }
    log().info('stopping on request');
    stopReducer();
    await proxy.close();
    return 0;
  }, io);
}
