/**
 * The proxy under test, in its own process (started by bench/run.ts with IPC). Runs the built
 * proxy (`dist/`, as the `moat` binary does) under plain Node: bench/run.ts transpiles this file
 * to JavaScript first, so no TypeScript loader (tsx, or Node's type stripping, ≈ 17 MB) sits in
 * the measured process; MOAT_BENCH_DIST is the file URL of dist/. argv[2] is a JSON backend description: {"kind":"http","url":...} or
 * {"kind":"stdio","command":[...]} (the stdio server is spawned by this process, as Moat's own
 * child) or {"kind":"aggregate","members":[{"name","url"}...]} (an aggregator, src/aggregate/,
 * started in this process over those member proxy URLs and fronted over HTTP, as the supervisor
 * of `moat group serve` runs both). argv[3] is what the process loads:
 *   - "supervisor" (default): what `moat supervise <name>` loads (its entry, the workload layer,
 *     the container runtime client) and the proxy started the way the supervisor starts it
 *     (`platform.startProxy`: inbound security from the RunConfig, then the proxy);
 *   - "library": only `startProxy` from dist/proxy/index.js (a lower bound for the proxy itself).
 * argv[4], optional, is JSON of further RunConfig fields (e.g. telemetry_config for the OTel cell).
 * Messages: {type:'memory'} → GC, then {rss, heapUsed}; {type:'stop'}.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { RunConfig } from '../src/config/runconfig.js';
import type * as ProxyModule from '../src/proxy/index.js';
import type * as DriversModule from '../src/workloads/drivers.js';
import type * as LogModule from '../src/util/log.js';
import type * as AggregateModule from '../src/aggregate/index.js';
import type * as SuperviseAggregateModule from '../src/workloads/supervise-aggregate.js';
import type { BackendSpec } from '../src/proxy/types.js';
import type { StdioPipes } from '../src/mcp/stdio.js';

const dist = (path: string) => new URL(path, process.env.MOAT_BENCH_DIST).href;
const embed = process.argv[3] === 'library' ? 'library' : 'supervisor';
if (embed === 'supervisor') {
  // The same module graph as `moat supervise` (main.ts routes it here without the command tree).
  await import(dist('cli/supervise.js'));
}
const { createLogger } = (await import(dist('util/log.js'))) as typeof LogModule;

type BackendArg =
  | { kind: 'http'; url: string }
  | { kind: 'stdio'; command: string[] }
  | { kind: 'aggregate'; members: Array<{ name: string; url: string }> };

const arg = JSON.parse(process.argv[2] ?? '{}') as BackendArg;
const children: Array<ReturnType<typeof spawn>> = [];

async function startAggregate(members: Array<{ name: string; url: string }>) {
  const { startAggregator } = (await import(dist('aggregate/index.js'))) as typeof AggregateModule;
  const { MEMBER_REFRESH_MS } = (await import(
    dist('workloads/supervise-aggregate.js')
  )) as typeof SuperviseAggregateModule;
  // As src/workloads/supervise-aggregate.ts starts it: its refresh, a sealed-session key.
  return startAggregator({
    members: () => Promise.resolve(members.map((m) => ({ ...m, healthy: true }))),
    refreshMs: MEMBER_REFRESH_MS,
    sessionKey: randomBytes(32),
  });
}
const aggregator = arg.kind === 'aggregate' ? await startAggregate(arg.members) : undefined;

function spawnStdio(command: string[]): Promise<StdioPipes> {
  const [file, ...args] = command;
  const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return Promise.resolve({ stdin: child.stdin, stdout: child.stdout, close: () => child.stdin.end() });
}

const backend: BackendSpec =
  arg.kind === 'http'
    ? { kind: 'http', url: arg.url, transport: 'streamable-http', remote: false }
    : arg.kind === 'aggregate'
      ? // As the aggregate's supervisor starts it (src/workloads/supervise-aggregate.ts).
        {
          kind: 'http',
          url: aggregator!.url,
          transport: 'streamable-http',
          remote: false,
          memberOf: aggregator!.memberOf,
        }
      : { kind: 'stdio', connect: () => spawnStdio(arg.command) };

const fields = {
  image: 'bench',
  name: 'bench',
  transport: arg.kind === 'stdio' ? ('stdio' as const) : ('streamable-http' as const),
  host: '127.0.0.1',
  port: 0,
  ...(arg.kind === 'aggregate' ? { aggregate: { group: 'bench' } } : {}),
};
// A RunConfig as `moat run` saves it (the supervisor reads it without the schema).
const config: RunConfig = {
  ...fields,
  schema_version: 'v0.1.0',
  permission_profile: null,
  proxy_mode: 'streamable-http',
  ...(JSON.parse(process.argv[4] ?? '{}') as Partial<RunConfig>),
};
async function start(): Promise<{ url: string; close(): Promise<void> }> {
  if (embed === 'library') {
    const { startProxy } = (await import(dist('proxy/index.js'))) as typeof ProxyModule;
    const proxy = await startProxy(config, backend, { logger: createLogger(false) });
    return { url: proxy.endpoint, close: () => proxy.close() };
  }
  const { drivers } = (await import(dist('workloads/drivers.js'))) as typeof DriversModule;
  const proxy = await drivers.startProxy(config, backend);
  return { url: proxy.endpoint, close: () => proxy.close() };
}
const proxy = await start();

function memory(): { rss: number; heapUsed: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'memory') process.send?.({ type: 'memory', ...memory() });
  if (message.type === 'stop') {
    void proxy
      .close()
      .then(() => aggregator?.close())
      .then(() => {
        for (const child of children) child.kill('SIGTERM');
        process.exit(0);
      });
  }
});
process.send?.({ type: 'ready', url: proxy.url });
