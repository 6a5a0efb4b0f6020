/**
 * CLI responsiveness: `moat list`, `moat --help` and `moat run <URL>` as whole processes (node
 * dist/cli/main.js, as the installed `moat` runs), each several times, medians. `moat run <URL>`
 * runs a remote workload for a loopback MCP server and is timed until the first answer through
 * its proxy (an `initialize`), then removed with `moat rm`; `moat list` is timed with one such
 * workload running. Everything runs in a MOAT_HOME of its own.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const COMMAND_TIMEOUT_MS = 120_000;

export interface CliTimings {
  runs: number;
  /** Milliseconds, medians over `runs`. */
  listMs: number;
  helpMs: number;
  runMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs `moat ...args`; resolves with its stdout and wall time, rejects on a non-zero exit. */
function moat(home: string, args: string[]): Promise<{ out: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, MOAT_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: COMMAND_TIMEOUT_MS,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve({ out, ms });
      else reject(new Error(`moat ${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`));
    });
  });
}

/** `moat run <backendUrl>` until an initialize through the proxy is answered; the workload stays. */
async function timeRun(home: string, name: string, backendUrl: string): Promise<number> {
  const started = performance.now();
  const { out } = await moat(home, ['run', '--name', name, backendUrl]);
  const url = /^URL: (\S+)$/m.exec(out)?.[1];
  if (!url) throw new Error(`no URL in the output of moat run: ${out}`);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('"result"'))
    throw new Error(`initialize: HTTP ${res.status} ${text}`);
  return performance.now() - started;
}

export async function cliTimings(backendUrl: string, runs = 5): Promise<CliTimings> {
  const home = mkdtempSync(join(tmpdir(), 'moat-bench-cli-'));
  const run: number[] = [];
  const list: number[] = [];
  const help: number[] = [];
  const names: string[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const name = `bench-cli-${i}`;
      names.push(name);
      run.push(await timeRun(home, name, backendUrl));
      // The last one keeps running while `moat list` is timed.
      if (i < runs - 1) await moat(home, ['rm', name]).then(() => names.pop());
    }
    for (let i = 0; i < runs; i++) {
      list.push((await moat(home, ['list'])).ms);
      help.push((await moat(home, ['--help'])).ms);
    }
  } finally {
    // Stops the supervisors still running (by their status files' PIDs), then drops the home.
    for (const name of names) await moat(home, ['rm', name]).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
  return { runs, listMs: median(list), helpMs: median(help), runMs: median(run) };
}
