/**
 * Runs the real `moat` binary (dist/cli/main.js) for integration and end-to-end tests, each
 * test with its own MOAT_HOME (isolated state) and the test run's Podman socket. `ensureBuilt`
 * rebuilds dist/ when a source file is newer than the build, so the binary under test is never
 * stale.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { withCacheLock } from './cache.js';
import { podmanSocket } from './podman.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MOAT_MAIN = join(ROOT, 'dist/cli/main.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (/\.(ts|css)$/.test(entry.name) && !entry.name.endsWith('.test.ts')) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

function buildIsStale(): boolean {
  try {
    return statSync(MOAT_MAIN).mtimeMs < newestMtime(join(ROOT, 'src'));
  } catch {
    return true;
  }
}

/**
 * Builds dist/ (and the dashboard's bundle) when it is missing or older than src/ (call in beforeAll). One build at a time
 * across parallel test files; tsc emits even when another part of the tree has type errors
 * (the typecheck step reports those).
 */
export async function ensureBuilt(): Promise<void> {
  if (!buildIsStale()) return;
  await withCacheLock('moat-dist-build', async () => {
    if (!buildIsStale()) return;
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: ROOT,
      },
    ).catch(() => undefined);
    // The dashboard's browser bundle (`npm run build` does the same).
    await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/build-ui.ts')], {
      cwd: ROOT,
    });
  });
}

/** A private MOAT_HOME; remove it with `removeHome`. */
export function moatHome(): string {
  return mkdtempSync(join(tmpdir(), 'moat-home-'));
}

export function removeHome(home: string): void {
  rmSync(home, { recursive: true, force: true });
}

/**
 * A private MOAT_HOME for one test file (call at the top level): dist/ is built before the
 * file's tests; afterwards every workload in it is removed, then the directory.
 */
export function testMoatHome(): string {
  const home = moatHome();
  beforeAll(ensureBuilt);
  afterAll(async () => {
    await moat(home, ['rm', '--all']);
    removeHome(home);
  });
  return home;
}

export function moatEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, MOAT_HOME: home, MOAT_RUNTIME_SOCKET: podmanSocket(), ...extra };
}

export interface MoatResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `moat <args>` to completion. */
export function moat(home: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<MoatResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MOAT_MAIN, ...args],
      { env: moatEnv(home, extraEnv), maxBuffer: 16 * 1024 * 1024, timeout: 300_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Like `moat`, but fails the test with the output when the exit code is not 0. */
export async function moatOk(
  home: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<string> {
  const result = await moat(home, args, extraEnv);
  if (result.code !== 0) {
    throw new Error(
      `moat ${args.join(' ')} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  return result.stdout;
}

/** Starts `moat <args>` in the background (foreground runs); stop it by its PID. */
export function spawnMoat(home: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [MOAT_MAIN, ...args], {
    env: moatEnv(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** One row of `moat list --format json`. */
export interface ListedWorkload {
  name: string;
  status: string;
  status_context: string;
  transport: string;
  url: string;
  port: number;
  group: string;
  remote: boolean;
  restarts: number;
}

export async function listWorkloads(home: string, ...flags: string[]): Promise<ListedWorkload[]> {
  return JSON.parse(await moatOk(home, ['list', '--all', '--format', 'json', ...flags])) as ListedWorkload[];
}

export async function workload(home: string, name: string): Promise<ListedWorkload | undefined> {
  return (await listWorkloads(home)).find((w) => w.name === name);
}

/** A workload's status file as saved under MOAT_HOME. */
export interface StatusFile {
  process_id: number;
  history: Array<{ status: string; context: string }>;
}

export function statusFile(home: string, name: string): StatusFile {
  return JSON.parse(readFileSync(join(home, 'data/statuses', `${name}.json`), 'utf8')) as StatusFile;
}

/** The URL `moat run`/`moat start` printed. */
export function printedUrl(stdout: string): string {
  const match = /URL: (\S+)/.exec(stdout);
  if (!match) throw new Error(`no URL in output: ${stdout}`);
  return match[1]!;
}

/** The URL a foreground run (`moat run -f`, `moat group serve -f`) prints; rejects with its output if it exits first. */
export function urlPrintedBy(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += String(d);
      const match = /URL: (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the foreground run exited with ${code}: ${out}`)));
  });
}

/**
 * Calls a tool through the proxy with a real MCP SDK client (legacy SSE for a `/sse` URL,
 * streamable HTTP otherwise); returns its text.
 */
export async function callTool(url: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const client = new Client({ name: 'moat-test', version: '1.0.0' });
  const endpoint = new URL(url);
  await client.connect(
    endpoint.pathname.endsWith('/sse')
      ? new SSEClientTransport(endpoint)
      : new StreamableHTTPClientTransport(endpoint),
  );
  try {
    const result = await client.callTool({ name: tool, arguments: args });
    const content = result.content as Array<{ type: string; text?: string }>;
    return content.map((c) => c.text ?? '').join('');
  } finally {
    await client.close();
  }
}

/** The tool names a streamable-HTTP proxy URL lists, through a real MCP SDK client. */
export async function toolNames(url: string): Promise<string[]> {
  const client = new Client({ name: 'moat-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

/** Polls `check` until it returns a value (not undefined), failing with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
