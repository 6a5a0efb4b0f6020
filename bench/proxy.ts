/**
 * The proxy under test, in its own process (started by bench/run.ts with IPC). Runs the built
 * proxy (`dist/`, as the `moat` binary does) under plain Node, so no TypeScript loader sits in
 * the measured process. argv[2] is a JSON
 * backend description: {"kind":"http","url":...} or {"kind":"stdio","command":[...]} (the stdio
 * server is spawned by this process, as Moat's own child). Messages: {type:'memory'} → GC, then
 * {rss, heapUsed}; {type:'stop'}.
 */
import { spawn } from 'node:child_process';
import { pino } from 'pino';
import type * as RunConfigModule from '../src/config/runconfig.js';
import type * as ProxyModule from '../src/proxy/index.js';
import type { BackendSpec, StdioPipes } from '../src/proxy/types.js';

const dist = (path: string) => new URL(`../dist/${path}`, import.meta.url).href;
const { runConfigSchema } = (await import(dist('config/runconfig.js'))) as typeof RunConfigModule;
const { startProxy } = (await import(dist('proxy/index.js'))) as typeof ProxyModule;

type BackendArg = { kind: 'http'; url: string } | { kind: 'stdio'; command: string[] };

const arg = JSON.parse(process.argv[2] ?? '{}') as BackendArg;
const children: Array<ReturnType<typeof spawn>> = [];

function spawnStdio(command: string[]): Promise<StdioPipes> {
  const [file, ...args] = command;
  const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return Promise.resolve({ stdin: child.stdin, stdout: child.stdout, close: () => child.stdin.end() });
}

const backend: BackendSpec =
  arg.kind === 'http'
    ? { kind: 'http', url: arg.url, transport: 'streamable-http', remote: false }
    : { kind: 'stdio', connect: () => spawnStdio(arg.command) };

const config = runConfigSchema.parse({
  image: 'bench',
  name: 'bench',
  transport: arg.kind === 'http' ? 'streamable-http' : 'stdio',
  host: '127.0.0.1',
  port: 0,
});
const proxy = await startProxy(config, backend, { logger: pino({ level: 'warn' }) });

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
    void proxy.close().then(() => {
      for (const child of children) child.kill('SIGTERM');
      process.exit(0);
    });
  }
});
process.send?.({ type: 'ready', url: `${proxy.url}/mcp` });
