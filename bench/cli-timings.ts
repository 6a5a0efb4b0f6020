/**
 * CLI responsiveness: `moat list`, `moat --help` and `moat run <URL>` as whole processes (node
 * dist/cli/main.js, as the installed `moat` runs), each several times, medians. `moat run <URL>`
 * runs a remote workload for a loopback MCP server and is timed until the first answer through
 * its proxy (an `initialize`), then removed with `moat rm`; `moat list` is timed with one such
 * workload running. Every build runs in a MOAT_HOME of its own.
 *
 * With a baseline build (another commit's `dist/`), both builds run in the same rounds, one after
 * the other, so a burst of outside load hits both. Besides wall time, each `list` and `--help`
 * process reports its own CPU time (user + system), which shared-machine load hardly moves.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const COMMAND_TIMEOUT_MS = 120_000;
const CPU_MARK = 'MOAT_BENCH_CPU_US ';
/** Preloaded into each timed process: writes its CPU time to stderr as it exits. */
const REPORT_CPU = `data:text/javascript,${encodeURIComponent(
  `import { writeSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); ` +
    `writeSync(2, '\\n${CPU_MARK}' + (u.user + u.system) + '\\n'); });`,
)}`;

export interface CliTimings {
  runs: number;
  /** Milliseconds, medians over `runs`. */
  listMs: number;
  helpMs: number;
  runMs: number;
  /** CPU time (user + system) of the `moat list` and `moat --help` processes, medians. */
  listCpuMs: number;
  helpCpuMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** One build of moat under test: its entry point and its own MOAT_HOME. */
interface Build {
  main: string;
  home: string;
  /** Workloads still to remove at the end. */
  names: string[];
  run: number[];
  list: number[];
  help: number[];
  listCpu: number[];
  helpCpu: number[];
}

/** Runs `moat ...args`; resolves with its stdout, wall time and CPU time, rejects on a non-zero exit. */
function moat(build: Build, args: string[]): Promise<{ out: string; ms: number; cpuMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', REPORT_CPU, build.main, ...args], {
    env: { ...process.env, MOAT_HOME: build.home },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: COMMAND_TIMEOUT_MS,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = performance.now() - started;
      const cpuUs = Number(err.slice(err.lastIndexOf(CPU_MARK) + CPU_MARK.length).trim());
      if (code === 0) resolve({ out, ms, cpuMs: cpuUs / 1000 });
      else reject(new Error(`moat ${args.join(' ')} (${build.main}) exited ${code}: ${err.slice(0, 500)}`));
    });
  });
}

/** `moat run <backendUrl>` until an initialize through the proxy is answered; the workload stays. */
async function timeRun(build: Build, name: string, backendUrl: string): Promise<number> {
  const started = performance.now();
  const { out } = await moat(build, ['run', '--name', name, backendUrl]);
  build.names.push(name);
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

function newBuild(main: string): Build {
  const home = mkdtempSync(join(tmpdir(), 'moat-bench-cli-'));
  return { main, home, names: [], run: [], list: [], help: [], listCpu: [], helpCpu: [] };
}

function timings(build: Build, runs: number): CliTimings {
  return {
    runs,
    listMs: median(build.list),
    helpMs: median(build.help),
    runMs: median(build.run),
    listCpuMs: median(build.listCpu),
    helpCpuMs: median(build.helpCpu),
  };
}

/**
 * This build's timings, and with `baselineDist` (a `dist/` built from another commit, e.g.
 * /work/base-main/dist/) the baseline's from the same rounds.
 */
export async function cliTimings(
  backendUrl: string,
  runs = 5,
  baselineDist?: string,
): Promise<{ current: CliTimings; baseline?: CliTimings }> {
  const current = newBuild(MAIN);
  const baseline = baselineDist ? newBuild(join(baselineDist, 'cli/main.js')) : undefined;
  const builds = baseline ? [current, baseline] : [current];
  try {
    for (let i = 0; i < runs; i++) {
      for (const build of builds) {
        const name = `bench-cli-${i}`;
        build.run.push(await timeRun(build, name, backendUrl));
        // The last one keeps running while `moat list` is timed.
        if (i < runs - 1) await moat(build, ['rm', name]).then(() => build.names.pop());
      }
    }
    for (let i = 0; i < runs; i++) {
      for (const build of builds) {
        const list = await moat(build, ['list']);
        if (!list.out.includes(`bench-cli-${runs - 1}`)) throw new Error(`moat list: ${list.out}`);
        build.list.push(list.ms);
        build.listCpu.push(list.cpuMs);
        const help = await moat(build, ['--help']);
        build.help.push(help.ms);
        build.helpCpu.push(help.cpuMs);
      }
    }
  } finally {
    for (const build of builds) {
      // Stops the supervisors still running (by their status files' PIDs), then drops the home.
      for (const name of build.names) await moat(build, ['rm', name]).catch(() => undefined);
      rmSync(build.home, { recursive: true, force: true });
    }
  }
  return {
    current: timings(current, runs),
    ...(baseline ? { baseline: timings(baseline, runs) } : {}),
  };
}

/** The CLI section of the report: medians of this build and, when measured, of the baseline. */
export function cliTable(result: { current: CliTimings; baseline?: CliTimings }): string[] {
  const { current, baseline } = result;
  const ms = (x: number) => `${Math.round(x)}`;
  const ratio = (x: number, base: number) => `${(x / base).toFixed(2)}×`;
  const rows: Array<[string, (t: CliTimings) => number]> = [
    ['`moat list` wall', (t) => t.listMs],
    ['`moat list` CPU', (t) => t.listCpuMs],
    ['`moat --help` wall', (t) => t.helpMs],
    ['`moat --help` CPU', (t) => t.helpCpuMs],
    ['`moat run <URL>` to the first answer, wall', (t) => t.runMs],
  ];
  const lines = baseline
    ? ['| command (ms, median) | this build | baseline | ratio |', '|---|---|---|---|']
    : ['| command (ms, median) | this build |', '|---|---|'];
  for (const [label, pick] of rows)
    lines.push(
      baseline
        ? `| ${label} | ${ms(pick(current))} | ${ms(pick(baseline))} | ${ratio(pick(current), pick(baseline))} |`
        : `| ${label} | ${ms(pick(current))} |`,
    );
  lines.push(
    '',
    `${current.runs} runs of each command per build${baseline ? ', the builds alternating' : ''}.`,
  );
  return lines;
}
