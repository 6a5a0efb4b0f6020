/**
 * Starts bench/proxy.ts — Moat's proxy from a built `dist/` under plain Node, with the launch
 * settings of src/util/proxy-launch.ts — in a process of its own, for the bench (bench/run.ts)
 * and the soak (bench/soak.ts): both measure the process a real proxy runs, not a TypeScript
 * loader's.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { PROXY_ENV_DEFAULTS, PROXY_NODE_FLAGS } from '../src/util/proxy-launch.js';
import type { ProxyProcess } from './bench-types.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

/** User+system CPU seconds a process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Resident set and live heap of the proxy process after a forced full GC, in bytes. */
export interface Memory {
  rss: number;
  heapUsed: number;
}

export interface MeasuredProxy extends ProxyProcess {
  pid: number;
  memory(): Promise<Memory>;
}

const launched: ChildProcess[] = [];

/** The proxy runs from dist/ like the moat binary: build it first. */
export function buildDist(): void {
  const result = spawnSync(
    process.execPath,
    [here('../node_modules/typescript/bin/tsc'), '-p', here('../tsconfig.build.json')],
    { stdio: 'inherit' },
  );
  if (result.status !== 0 && !existsSync(here('../dist/proxy/index.js'))) throw new Error('the build failed');
}

let script: string | undefined;

/**
 * bench/proxy.ts as plain JavaScript: a TypeScript loader in the proxy process would be counted
 * in its memory, and the product runs JavaScript.
 */
function proxyScript(): string {
  const source = readFileSync(here('./proxy.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
  });
  const dir = mkdtempSync(join(tmpdir(), 'moat-bench-'));
  const file = join(dir, 'proxy.mjs');
  writeFileSync(file, outputText);
  return file;
}

/**
 * The proxy process, started as `moat` starts the supervisor (its V8 flags and environment
 * defaults; with `launchSettings` false, Node's defaults, or other V8 flags); `dist` is the build to run (another
 * build's dist/ for before/after comparisons). `extraConfig` is merged into its RunConfig.
 */
export async function startProxy(
  backend: object,
  embed: 'supervisor' | 'library',
  extraConfig: object = {},
  dist = here('../dist/'),
  launchSettings: boolean | { nodeFlags: readonly string[] } = true,
): Promise<MeasuredProxy> {
  const nodeFlags =
    launchSettings === true ? PROXY_NODE_FLAGS : launchSettings ? launchSettings.nodeFlags : [];
  script ??= proxyScript();
  const child = fork(script, [JSON.stringify(backend), embed, JSON.stringify(extraConfig)], {
    env: {
      ...(launchSettings ? PROXY_ENV_DEFAULTS : {}),
      ...process.env,
      MOAT_BENCH_DIST: pathToFileURL(`${dist.replace(/\/+$/, '')}/`).href,
    },
    execArgv: ['--expose-gc', ...nodeFlags],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  launched.push(child);
  const [ready] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(() => {
      throw new Error('the proxy process exited before it was ready');
    }),
  ])) as [{ url: string }];
  return {
    url: ready.url,
    pid: child.pid!,
    memory: async () => {
      child.send({ type: 'memory' });
      const [m] = (await once(child, 'message')) as [Memory];
      return { rss: m.rss, heapUsed: m.heapUsed };
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ type: 'stop' });
      await once(child, 'exit');
    },
  };
}

/** Ends the proxy processes still running (by their own handles) and removes the script. */
export function cleanUpProxies(): void {
  for (const child of launched)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  if (script) rmSync(dirname(script), { recursive: true, force: true });
  script = undefined;
}
