/**
 * Moat's proxy benchmark: `npm run bench` (or `node --import tsx bench/run.ts`).
 *
 * Separate processes for the load generator (bench/load.ts), the proxy (bench/proxy.ts, started
 * with the runtime settings `moat` gives the supervisor) and the backend (bench/backend-*.ts),
 * all on loopback. Every proxied figure is reported as a ratio to a direct connection to the same
 * backend measured in the same run:
 *   1. streamable-HTTP tools/call through the HTTP forwarder, concurrency 1, 8, 32; and through a
 *      minimal Node.js proxy (bench/pipe-proxy.ts), what one Node.js HTTP hop costs here
 *   2. the same through the official MCP SDK on both ends (SDK client → SDK server, stateful
 *      sessions, SSE-framed answers): protocol-correct traffic, what an MCP host and server do;
 *      and through the minimal Node.js proxy, the floor of that traffic
 *   3. the stdio path: HTTP → stdio bridge → stdio server, against the stdio server's pipes
 *      directly, and supergateway (the peer, bench/supergateway.ts) fronting the same server;
 *      and through a minimal Node.js HTTP-to-stdio proxy (bench/stdio-pipe-proxy.ts), the floor
 *   4. the HTTP forwarder with telemetry on (OTLP traces at sampling 0.1 and metrics), as a ratio
 *      to direct and to telemetry off
 *   5. proxy RSS idle (the process as `moat supervise` runs it, and the proxy library alone),
 *      after the HTTP load and after a quiet minute; memory per idle session (10 000 sessions)
 *   6. the policy-stack cells of bench/policies.ts, when that module is there
 *   7. CLI responsiveness: `moat list`, `moat --help`, `moat run <URL>` as whole processes
 *   8. with MOAT_BENCH_PEER=toolhive, ToolHive v0.47.0 beside `moat proxy`, the same policy stack
 *      on both (bench/toolhive.ts; built once per machine by scripts/toolhive.sh)
 *   9. tool search: find_tool's recall@3 and @5 over real catalog servers' live tool lists, and
 *      the listing a client reads with and without it (bench/tool-search.ts)
 *  10. the aggregate endpoint (issue 32): tools/call through an aggregate of 6 members against the
 *      member's own proxy, and memory per connected client (bench/aggregate.ts)
 * Prints a Markdown report ending in a table of issue 19's targets (met or not), and writes
 * docs/perf-throughput.svg and docs/perf-p50.svg from the run's numbers. Every loop is bounded
 * by request count and by time.
 * `MOAT_BENCH_ONLY=telemetry npm run bench` runs only item 4's cells, telemetry off and on
 * interleaved in the same rounds at concurrency 1 and 32 (about 2 minutes);
 * `MOAT_BENCH_ONLY=policies` only item 6; `MOAT_BENCH_ONLY=launch` the HTTP forwarder with the
 * proxy launch settings against Node's defaults, same rounds; `MOAT_BENCH_ONLY=memory` item 5's
 * idle, after-load and after-quiet cells of the HTTP forwarder (and with MOAT_BENCH_BASELINE, of
 * another build's, in the same rounds); `MOAT_BENCH_ONLY=memory-full` the whole bench up to
 * item 5's quiet reading (items 1, 4 and 2 in order: the same load on the measured proxy and the
 * same cells while it idles), and stops there; `MOAT_BENCH_ONLY=stdio` only item 3's cells, plus a
 * minimal Node.js HTTP-to-stdio proxy (bench/stdio-pipe-proxy.ts, the floor) and, with
 * MOAT_BENCH_BASELINE=<dir> (a `dist/` built from another commit), that build's stdio bridge in
 * the same rounds; `MOAT_BENCH_ONLY=cli` only item 7; `MOAT_BENCH_ONLY=peer` only item 8;
 * `MOAT_BENCH_ONLY=guardrails` the full policy stack without and with guardrails (bench/guardrails.ts;
 * not part of the full run); `MOAT_BENCH_ONLY=tool-search` only item 9; `MOAT_BENCH_ONLY=aggregate` only item 10. MOAT_BENCH_BASELINE=<dist/ of another
 * commit> adds that build to the policy-stack, memory, stdio and CLI rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PROXY_ENV_DEFAULTS, PROXY_NODE_FLAGS } from '../src/util/proxy-launch.js';
import type { BenchKit, LoadResult, PolicyBench, Row, TargetResult } from './bench-types.js';
import { cliTable, cliTimings, type CliTimings } from './cli-timings.js';
import {
  buildDist,
  cleanUpProxies,
  cpuSeconds,
  startProxy,
  type MeasuredProxy,
  type Memory,
} from './proxy-launcher.js';
import { fmt, rowTable, targetTable, writePlots } from './report.js';
import { startSupergateway } from './supergateway.js';
import { roundOrder } from './round-order.js';
import { TOOLHIVE_PATH, TOOLHIVE_VERSION, toolhiveSection, type PeerSection } from './toolhive.js';
import { toolSearchSection } from './tool-search.js';
import { aggregateCells } from './aggregate.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const TSX = ['--import', 'tsx'];
const STDIO_BACKEND = [process.execPath, ...TSX, here('./backend-stdio.ts')];
const RUN_MAX_MS = 10_000;
const ROUNDS = 5;
const SESSIONS = 10_000;
/** Runs of each CLI command per build. */
const CLI_RUNS = 5;
const MB = 1024 * 1024;
const RAW_PATH = 'streamable HTTP (Moat)';
const OTEL_PATH = 'streamable HTTP (Moat), OTel on, sampling 0.1';
const SDK_PATH = 'streamable HTTP, MCP SDK client and server (Moat)';
const REFERENCE_PATH = 'streamable HTTP (minimal Node.js proxy, reference)';
const SDK_REFERENCE_PATH = 'streamable HTTP, MCP SDK client and server (minimal Node.js proxy, reference)';
const STDIO_PATH = 'stdio (Moat)';
const PEER_PATH = 'stdio (supergateway 4.0.0, peer)';
const STDIO_REFERENCE_PATH = 'stdio (minimal Node.js HTTP-to-stdio proxy, reference)';
const STDIO_BASELINE_PATH = `${STDIO_PATH}, baseline build`;
/** perf19a's cell module and the row its full-stack cells carry (bench/bench-types.ts). */
const POLICIES_MODULE = here('./policies.ts');
const FULL_STACK_PATH = 'streamable HTTP (Moat), full policy stack';
/** How long the proxy stays idle after the load before "after a quiet minute" is read. */
const QUIET_MS = 60_000;

const started: ChildProcess[] = [];

async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error('a benchmark process exited early');
    }),
  ])) as [string];
  lines.close();
  return line;
}

/** A helper server (backend or pipe proxy) that prints {"url"} when listening. */
async function startServer(file: string, ...args: string[]): Promise<string> {
  const child = spawn(process.execPath, [...TSX, here(file), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(child);
  return (JSON.parse(await firstLine(child)) as { url: string }).url;
}

/** An OTLP/HTTP receiver that accepts and drops everything (200, empty body). */
async function startOtlpSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function load(job: object): Promise<LoadResult> {
  const child = spawn(process.execPath, [...TSX, here('./load.ts'), JSON.stringify(job)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(child);
  const result = JSON.parse(await firstLine(child)) as LoadResult;
  await once(child, 'exit').catch(() => undefined);
  return result;
}

/**
 * Requests per run, after a warm-up. Runs last about 1–2 s: shorter ones measure the load
 * generator's own warm-up more than the proxy. The SDK cells are 10× slower, so they get fewer.
 */
function runSize(concurrency: number, sdk: boolean): { requests: number; warmup: number } {
  if (sdk) return { requests: concurrency === 1 ? 2000 : 4000, warmup: 300 };
  return { requests: concurrency === 1 ? 4000 : 20_000, warmup: 1000 };
}
const mb = (bytes: number) => `${fmt(bytes / MB, 1)} MB`;

/** The run whose value is the median of `pick` across rounds. */
function median(results: LoadResult[], pick: (r: LoadResult) => number): number {
  const values = results.map(pick).sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

function summarize(results: LoadResult[]): LoadResult {
  return {
    requests: results.reduce((n, r) => n + r.requests, 0),
    seconds: results.reduce((n, r) => n + r.seconds, 0),
    rps: median(results, (r) => r.rps),
    p50Ms: median(results, (r) => r.p50Ms),
    p99Ms: median(results, (r) => r.p99Ms),
    errors: results.reduce((n, r) => n + r.errors, 0),
  };
}

/**
 * Direct and proxied runs interleaved over ROUNDS rounds, medians reported: the machine is
 * shared, so a burst of outside load hits every side instead of skewing one. One row per proxied
 * target, all against the same direct runs. Direct is cell 0 of the round's order (roundOrder).
 */
async function compare(
  concurrency: number,
  direct: object,
  proxied: Array<[path: string, target: object]>,
): Promise<Row[]> {
  const sdk = (direct as { target?: string }).target === 'sdk';
  const common = { concurrency, ...runSize(concurrency, sdk), maxMs: RUN_MAX_MS };
  const d: LoadResult[] = [];
  const p: LoadResult[][] = proxied.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const cell of roundOrder(proxied.length + 1, round)) {
      if (cell === 0) d.push(await load({ ...direct, ...common }));
      else p[cell - 1]!.push(await load({ ...proxied[cell - 1]![1], ...common }));
    }
  }
  return proxied.map(([path], i) => {
    const row = { path, concurrency, direct: summarize(d), proxied: summarize(p[i]!) };
    process.stderr.write(
      `  ${path} c=${concurrency}: direct ${fmt(row.direct.rps, 0)} rps, proxied ${fmt(row.proxied.rps, 0)} rps\n`,
    );
    return row;
  });
}

async function sessionMemory(proxy: MeasuredProxy): Promise<{ before: Memory; after: Memory }> {
  const before = await proxy.memory();
  const result = await load({
    target: 'sessions',
    url: proxy.url,
    concurrency: 16,
    requests: SESSIONS,
    maxMs: 120_000,
  });
  if (result.requests !== SESSIONS) throw new Error(`only ${result.requests} sessions were created`);
  return { before, after: await proxy.memory() };
}

interface Variant {
  path: string;
  proxy: MeasuredProxy;
}

/**
 * HTTP forwarder variants (launch settings, builds) under the raw load, interleaved in the same
 * rounds at concurrency 1, 8 and 32, then stopped: the rows, and each variant's memory idle, after
 * the load and (with `quietMs`) that long after it.
 */
async function loadVariants(
  backendUrl: string,
  variants: Variant[],
  quietMs?: number,
): Promise<{ rows: Row[]; idle: Memory[]; after: Memory[]; quiet: Memory[]; cpu: CpuPerRequest[] }> {
  const memories = async () => {
    const out: Memory[] = [];
    for (const { proxy } of variants) out.push(await proxy.memory());
    return out;
  };
  const idle = await memories();
  const rows: Row[] = [];
  const cpu: CpuPerRequest[] = [];
  for (const concurrency of [1, 8, 32]) {
    const targets = variants.map((v): [string, object] => [v.path, { target: 'http', url: v.proxy.url }]);
    // Each proxy works only while its own runs go, so its CPU over the rounds is its cost.
    const before = variants.map((v) => cpuSeconds(v.proxy.pid));
    const compared = await compare(concurrency, { target: 'http', url: backendUrl }, targets);
    compared.forEach((row, i) => {
      const seconds = cpuSeconds(variants[i]!.proxy.pid) - before[i]!;
      cpu.push({
        path: row.path,
        concurrency,
        microseconds: (seconds * 1e6) / (row.proxied.requests + warmups(row)),
      });
    });
    rows.push(...compared);
  }
  const after = await memories();
  if (quietMs !== undefined) await sleep(quietMs);
  const quiet = quietMs !== undefined ? await memories() : [];
  await Promise.all(variants.map((v) => v.proxy.stop()));
  return { rows, idle, after, quiet, cpu };
}

/** A proxy's user+system CPU per request served (warm-ups included) at one concurrency. */
interface CpuPerRequest {
  path: string;
  concurrency: number;
  microseconds: number;
}

/**
 * CPU per request of each variant, and of the first against the second: steadier than throughput
 * on a shared machine, since another process's load slows a request without making it cost more.
 */
function cpuTable(cpu: CpuPerRequest[], variants: Variant[]): string[] {
  const of = (path: string, c: number) =>
    cpu.find((x) => x.path === path && x.concurrency === c)!.microseconds;
  const compared = variants.length > 1 ? ` | ${variants[0]!.path} ÷ ${variants[1]!.path}` : '';
  return [
    '',
    `| concurrency | ${variants.map((v) => `CPU per request, ${v.path}`).join(' | ')}${compared} |`,
    `|---|${variants.map(() => '---|').join('')}${compared ? '---|' : ''}`,
    ...[1, 8, 32].map(
      (c) =>
        `| ${c} | ${variants.map((v) => `${fmt(of(v.path, c), 1)} µs`).join(' | ')}${
          compared ? ` | ${fmt(of(variants[0]!.path, c) / of(variants[1]!.path, c), 3)}×` : ''
        } |`,
    ),
    '',
  ];
}

/** The start of a subset's report: when and where it ran, and its rows. */
function reportHead(loadAtStart: number[], rows: Row[]): string[] {
  return [measuredLine(loadAtStart), '', ...rowTable(rows), ''];
}

/** Throughput of one variant's rows against another's, per concurrency. */
function throughputLines(rows: Row[], path: string, against: string, label: string): string[] {
  return [1, 8, 32].flatMap((concurrency) => {
    const cell = (p: string) => rows.find((r) => r.path === p && r.concurrency === concurrency)!;
    const ratio = cell(path).proxied.rps / cell(against).proxied.rps;
    return ['', `${label}, throughput at concurrency ${concurrency}: ${fmt(ratio, 3)}×`];
  });
}

/**
 * `MOAT_BENCH_ONLY=launch`: the HTTP forwarder started with the proxy launch settings and with
 * Node's defaults, in the same rounds: what the settings cost in throughput and save in RSS.
 */
async function launchSettingsOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const backendUrl = await startServer('./backend-http.ts');
  const backend = { kind: 'http', url: backendUrl };
  const variants = [
    { path: `${RAW_PATH}, launch settings`, proxy: await startProxy(backend, 'supervisor') },
    {
      path: `${RAW_PATH}, Node defaults`,
      proxy: await startProxy(backend, 'supervisor', {}, undefined, false),
    },
  ];
  const { rows, idle, after, cpu } = await loadVariants(backendUrl, variants);
  const lines = [
    ...reportHead(loadAtStart, rows),
    ...cpuTable(cpu, variants),
    '| proxy | idle RSS | RSS after the load |',
    '|---|---|---|',
    ...variants.map(
      (v, i) => `| ${v.path} | ${mb(idle[i]!.rss)} | ${mb(after[i]!.rss)} (heap ${mb(after[i]!.heapUsed)}) |`,
    ),
    ...throughputLines(rows, variants[0]!.path, variants[1]!.path, 'Launch settings vs Node defaults'),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Each variant's RSS idle, after the load and a quiet while later. */
function quietMemoryTable(variants: Variant[], idle: Memory[], after: Memory[], quiet: Memory[]): string[] {
  return [
    `| proxy (after GC) | idle RSS | RSS after the load | RSS ${QUIET_MS / 1000} s later, idle meanwhile |`,
    '|---|---|---|---|',
    ...variants.map(
      (v, i) =>
        `| ${v.path} | ${mb(idle[i]!.rss)} | ${mb(after[i]!.rss)} (heap ${mb(after[i]!.heapUsed)}) | ${mb(quiet[i]!.rss)} (heap ${mb(quiet[i]!.heapUsed)}) |`,
    ),
  ];
}

/** The young-generation sizes `MOAT_BENCH_ONLY=semi-space` compares (MB per semi-space). */
const SEMI_SPACES_MB = [2, 4, 8];

/**
 * `MOAT_BENCH_ONLY=semi-space`: the HTTP forwarder with the launch settings but each of
 * SEMI_SPACES_MB as its V8 semi-space, in the same rounds: throughput (GC is a large part of the
 * proxy's CPU under load) against RSS after the load and a quiet minute later.
 */
async function semiSpaceOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const backendUrl = await startServer('./backend-http.ts');
  const backend = { kind: 'http', url: backendUrl };
  const variants: Variant[] = [];
  for (const size of SEMI_SPACES_MB) {
    const nodeFlags = [`--max-semi-space-size=${size}`];
    variants.push({
      path: `${RAW_PATH}, ${nodeFlags[0]}`,
      proxy: await startProxy(backend, 'supervisor', {}, undefined, { nodeFlags }),
    });
  }
  const { rows, idle, after, quiet, cpu } = await loadVariants(backendUrl, variants, QUIET_MS);
  const first = variants[0]!.path;
  const lines = [
    ...reportHead(loadAtStart, rows),
    ...quietMemoryTable(variants, idle, after, quiet),
    ...cpuTable(cpu, variants),
    ...variants.slice(1).flatMap((v) => throughputLines(rows, v.path, first, `${v.path} vs ${first}`)),
    '',
    ...targetTable(variants.map((v, i) => nearIdleTarget(idle[i]!, quiet[i]!, v.path))),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * `MOAT_BENCH_ONLY=memory`: the memory cells of the HTTP forwarder alone (about 4 minutes on an
 * idle machine): idle, after the raw HTTP load, and after a quiet minute, with the "back near
 * idle" target. With MOAT_BENCH_BASELINE=<a dist/ built from another commit>, that build's
 * forwarder runs in the same rounds and is measured the same way: memory and throughput before
 * and after a change, in one run.
 */
async function memoryOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const backendUrl = await startServer('./backend-http.ts');
  const backend = { kind: 'http', url: backendUrl };
  const variants = [{ path: RAW_PATH, proxy: await startProxy(backend, 'supervisor') }];
  const baselineDist = process.env.MOAT_BENCH_BASELINE;
  if (baselineDist) {
    const proxy = await startProxy(backend, 'supervisor', {}, baselineDist);
    variants.push({ path: `${RAW_PATH}, baseline build`, proxy });
  }
  const { rows, idle, after, quiet, cpu } = await loadVariants(backendUrl, variants, QUIET_MS);
  const lines = [
    ...reportHead(loadAtStart, rows),
    ...quietMemoryTable(variants, idle, after, quiet),
    ...cpuTable(cpu, variants),
    ...(baselineDist ? throughputLines(rows, RAW_PATH, variants[1]!.path, 'This build vs the baseline') : []),
    '',
    ...targetTable(variants.map((v, i) => nearIdleTarget(idle[i]!, quiet[i]!, v.path))),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `MOAT_BENCH_ONLY=telemetry`: only telemetry off and on, interleaved in the same rounds. */
async function telemetryOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const backendUrl = await startServer('./backend-http.ts');
  const offProxy = await startProxy({ kind: 'http', url: backendUrl }, 'supervisor');
  const otlp = await startOtlpSink();
  const otelProxy = await startProxy({ kind: 'http', url: backendUrl }, 'supervisor', OTEL_CONFIG(otlp.url));
  // MOAT_BENCH_BASELINE=<dist/ of another build>: that build's off and on cells in the same rounds.
  const baselineDist = process.env.MOAT_BENCH_BASELINE;
  const baseline = baselineDist
    ? await Promise.all([
        startProxy({ kind: 'http', url: backendUrl }, 'supervisor', {}, baselineDist),
        startProxy({ kind: 'http', url: backendUrl }, 'supervisor', OTEL_CONFIG(otlp.url), baselineDist),
      ])
    : [];
  const paths = [
    RAW_PATH,
    OTEL_PATH,
    ...baseline.map((_, i) => `${[RAW_PATH, OTEL_PATH][i]}, baseline build`),
  ];
  const proxies = [offProxy, otelProxy, ...baseline];
  // Idle RSS after start (after GC), before any load: what telemetry on costs in memory.
  const idle: Memory[] = [];
  for (const p of proxies) idle.push(await p.memory());
  const rows: Row[] = [];
  for (const concurrency of [1, 32]) {
    rows.push(
      ...(await compare(
        concurrency,
        { target: 'http', url: backendUrl },
        proxies.map((p, i) => [paths[i]!, { target: 'http', url: p.url }]),
      )),
    );
  }
  await Promise.all(proxies.map((p) => p.stop()));
  await otlp.close();
  const lines = [
    measuredLine(loadAtStart),
    '',
    ...rowTable(rows),
    '',
    '| proxy | idle RSS after start |',
    '| --- | --- |',
    ...paths.map((path, i) => `| ${path} | ${mb(idle[i]!.rss)} (heap ${mb(idle[i]!.heapUsed)}) |`),
    '',
  ];
  for (const concurrency of [1, 32]) {
    const cell = (path: string) => rows.find((r) => r.path === path && r.concurrency === concurrency)!;
    const ratio = (suffix: string) =>
      fmt(cell(`${OTEL_PATH}${suffix}`).proxied.rps / cell(`${RAW_PATH}${suffix}`).proxied.rps, 3);
    lines.push(
      `OTel on (sampling 0.1) vs off, throughput at concurrency ${concurrency}: ${ratio('')}×` +
        (baselineDist ? `; baseline build ${ratio(', baseline build')}×` : ''),
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * `MOAT_BENCH_ONLY=stdio`: the stdio cells alone — Moat's bridge, supergateway, the minimal
 * HTTP-to-stdio reference and (MOAT_BENCH_BASELINE) another build's bridge, same rounds.
 */
async function stdioOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const baselineDist = process.env.MOAT_BENCH_BASELINE;
  const stdio = { kind: 'stdio', command: STDIO_BACKEND };
  const moat = await startProxy(stdio, 'supervisor');
  const baseline = baselineDist ? await startProxy(stdio, 'supervisor', {}, baselineDist) : undefined;
  const peer = await startSupergateway(STDIO_BACKEND);
  const reference = await startServer('./stdio-pipe-proxy.ts', JSON.stringify(STDIO_BACKEND));
  const rows: Row[] = [];
  for (const concurrency of [1, 8, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'stdio', command: STDIO_BACKEND }, [
        [STDIO_PATH, { target: 'http', url: moat.url }],
        ...(baseline
          ? [[STDIO_BASELINE_PATH, { target: 'http', url: baseline.url }] as [string, object]]
          : []),
        [PEER_PATH, { target: 'http', url: peer.url }],
        [STDIO_REFERENCE_PATH, { target: 'http', url: reference }],
      ])),
    );
  }
  await Promise.all([moat.stop(), baseline?.stop(), peer.stop()]);
  const cell = (path: string, concurrency: number) =>
    rows.find((r) => r.path === path && r.concurrency === concurrency)!;
  const lines = [measuredLine(loadAtStart), '', ...rowTable(rows), ''];
  const versus = (path: string, name: string) => {
    const p50 = cell(path, 1).proxied.p50Ms / cell(PEER_PATH, 1).proxied.p50Ms;
    const rps = cell(path, 32).proxied.rps / cell(PEER_PATH, 32).proxied.rps;
    lines.push(
      `${name} vs supergateway: p50 at concurrency 1 ${fmt(p50, 3)}×, throughput at 32 ${fmt(rps, 3)}×`,
    );
  };
  versus(STDIO_PATH, 'Moat');
  if (baseline) {
    versus(STDIO_BASELINE_PATH, 'Moat (baseline build)');
    const p50 = cell(STDIO_PATH, 1).proxied.p50Ms / cell(STDIO_BASELINE_PATH, 1).proxied.p50Ms;
    const rps = cell(STDIO_PATH, 32).proxied.rps / cell(STDIO_BASELINE_PATH, 32).proxied.rps;
    lines.push(
      `Moat vs the baseline build: p50 at concurrency 1 ${fmt(p50, 3)}×, throughput at 32 ${fmt(rps, 3)}×`,
    );
  }
  versus(STDIO_REFERENCE_PATH, 'Minimal HTTP-to-stdio reference');
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Spans (sampling 0.1) and metrics exported over OTLP/HTTP to `endpoint`. */
const OTEL_CONFIG = (endpoint: string) => ({ telemetry_config: { endpoint, samplingRate: '0.1' } });

function measuredLine(loadAtStart: number[]): string {
  return (
    `Measured ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ` +
    `load average (1/5/15 min) at start ${loadAtStart.map((l) => fmt(l)).join(' ')}, at the end ${loadavg()
      .map((l) => fmt(l))
      .join(' ')}; medians of ${ROUNDS} interleaved rounds per cell.`
  );
}

/** Warm-up requests of a row's proxied runs over all rounds (`compare` sends them before each run). */
const warmups = (row: Row) => ROUNDS * runSize(row.concurrency, row.path.includes('MCP SDK')).warmup;

const kit: BenchKit = { startServer, startProxy, startOtlpSink, compare, rowTable, warmups, load };

/** The peer section `MOAT_BENCH_PEER` asks for (only `toolhive` exists), or undefined when unset. */
async function peerSection(): Promise<PeerSection | undefined> {
  const peer = process.env.MOAT_BENCH_PEER;
  if (peer === undefined || peer === '') return undefined;
  if (peer !== 'toolhive') throw new Error(`MOAT_BENCH_PEER=${peer}: the only peer is "toolhive"`);
  process.stderr.write(`  ToolHive ${TOOLHIVE_VERSION} side by side\n`);
  return toolhiveSection(kit);
}

/** `MOAT_BENCH_ONLY=peer`: only the peer section (MOAT_BENCH_PEER=toolhive). */
async function peerOnly(): Promise<void> {
  const loadAtStart = loadavg();
  const peer = await peerSection();
  if (!peer) throw new Error('MOAT_BENCH_ONLY=peer needs MOAT_BENCH_PEER=toolhive');
  process.stdout.write(`${[measuredLine(loadAtStart), '', ...peer.lines].join('\n')}\n`);
}

/** bench/policies.ts's cells (bench/bench-types.ts has the contract), or undefined without it. */
async function policyBench(): Promise<PolicyBench | undefined> {
  if (!existsSync(POLICIES_MODULE)) return undefined;
  const module = (await import(pathToFileURL(POLICIES_MODULE).href)) as {
    policyCells(kit: BenchKit): Promise<PolicyBench>;
  };
  return module.policyCells(kit);
}

/** `MOAT_BENCH_ONLY=policies`: only the policy-stack cells. */
async function policiesOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const policies = await policyBench();
  if (!policies) throw new Error(`MOAT_BENCH_ONLY=policies needs ${POLICIES_MODULE}, which is not there`);
  process.stdout.write(`${[measuredLine(loadAtStart), '', ...policies.lines].join('\n')}\n`);
}

/** `MOAT_BENCH_ONLY=guardrails`: the full stack without and with guardrails (bench/guardrails.ts). */
async function guardrailsOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const { guardrailCells } = await import('./guardrails.js');
  const lines = await guardrailCells(kit);
  process.stdout.write(`${[measuredLine(loadAtStart), '', ...lines].join('\n')}\n`);
}

/** Memory figures of the run, in bytes (RSS and heap after a forced GC). */
interface MemoryReport {
  library: Memory;
  idle: Memory;
  stdioIdle: Memory;
  otelIdle: Memory;
  afterLoad: Memory;
  afterQuiet: Memory;
  perSession: { http: { rss: number; heap: number }; stdio: { rss: number; heap: number } };
}

function memoryTable(m: MemoryReport): string[] {
  const row = (label: string, x: Memory) => `| ${label} | ${mb(x.rss)} (heap ${mb(x.heapUsed)}) |`;
  const session = (label: string, x: { rss: number; heap: number }) =>
    `| per idle session, ${label} (${SESSIONS} sessions) | ${fmt(x.heap / 1024)} KB heap, ${fmt(x.rss / 1024)} KB RSS |`;
  return [
    `| memory (proxy process, after GC; launched with ${PROXY_NODE_FLAGS.join(' ')}, MALLOC_ARENA_MAX=${PROXY_ENV_DEFAULTS.MALLOC_ARENA_MAX}, MALLOC_MMAP_THRESHOLD_=${PROXY_ENV_DEFAULTS.MALLOC_MMAP_THRESHOLD_}) | value |`,
    '|---|---|',
    row('idle RSS after start, as `moat supervise` runs it (HTTP backend)', m.idle),
    row('idle RSS after start, as `moat supervise` runs it (stdio backend)', m.stdioIdle),
    row('idle RSS after start, proxy library alone (HTTP backend)', m.library),
    row('idle RSS after start, telemetry on (OTLP traces and metrics)', m.otelIdle),
    row('RSS after the HTTP load runs', m.afterLoad),
    row(`RSS ${QUIET_MS / 1000} s after the HTTP load, idle meanwhile`, m.afterQuiet),
    session('HTTP forwarder', m.perSession.http),
    session('stdio bridge', m.perSession.stdio),
  ];
}

/** Issue 19's targets and the earlier no-policy ones, from this run's cells. */
function targets(
  rows: Row[],
  m: MemoryReport,
  cli: CliTimings,
  policies: PolicyBench | undefined,
): TargetResult[] {
  const cell = (path: string, concurrency: number) =>
    rows.find((r) => r.path === path && r.concurrency === concurrency)!;
  const throughput = (r: Row) => r.proxied.rps / r.direct.rps;
  const p50 = (r: Row) => r.proxied.p50Ms / r.direct.p50Ms;
  const ratio = (x: number) => `${fmt(x, 3)}×`;
  const both = (
    target: string,
    measure: (r: Row) => number,
    concurrency: number,
    ok: (x: number) => boolean,
  ) => [
    {
      target: `${target} (raw JSON-RPC, minimal backend)`,
      measured: ratio(measure(cell(RAW_PATH, concurrency))),
      met: ok(measure(cell(RAW_PATH, concurrency))),
    },
    {
      target: `${target} (MCP SDK client and server)`,
      measured: ratio(measure(cell(SDK_PATH, concurrency))),
      met: ok(measure(cell(SDK_PATH, concurrency))),
    },
  ];
  const worstSession =
    Math.max(m.perSession.http.heap, m.perSession.http.rss, m.perSession.stdio.heap, m.perSession.stdio.rss) /
    1024;
  const peer32 = cell(STDIO_PATH, 32).proxied.rps / cell(PEER_PATH, 32).proxied.rps;
  const peer1 = cell(STDIO_PATH, 1).proxied.p50Ms / cell(PEER_PATH, 1).proxied.p50Ms;
  const floor1 = cell(STDIO_REFERENCE_PATH, 1).proxied.p50Ms / cell(PEER_PATH, 1).proxied.p50Ms;
  return [
    ...both('throughput ≥ 0.6× direct at concurrency 32, no policies', throughput, 32, (x) => x >= 0.6),
    ...both('p50 at concurrency 1 ≤ 1.5× direct, no policies', p50, 1, (x) => x <= 1.5),
    {
      target: 'OTel on (sampling 0.1) vs off, throughput at concurrency 32',
      measured: `${ratio(throughput(cell(OTEL_PATH, 32)) / throughput(cell(RAW_PATH, 32)))} of telemetry off`,
      met: undefined,
    },
    ...(policies?.targets ?? [
      {
        target: 'policy stack (bench/policies.ts)',
        measured: 'module not present in this build',
        met: undefined,
      },
    ]),
    {
      target: 'idle proxy RSS ≤ 80 MB',
      measured: `${mb(m.idle.rss)} as \`moat supervise\` runs it; ${mb(m.library.rss)} for the proxy library alone`,
      met: m.idle.rss <= 80 * MB,
    },
    {
      target: "RSS after the bench's full HTTP load ≤ 110 MB",
      measured: `${mb(m.afterLoad.rss)} (heap ${mb(m.afterLoad.heapUsed)})`,
      met: m.afterLoad.rss <= 110 * MB,
    },
    nearIdleTarget(m.idle, m.afterQuiet),
    {
      target: '≤ 2 KB per idle session (memory store)',
      measured: `${fmt(worstSession)} KB (worst of heap/RSS, HTTP and stdio)`,
      met: worstSession <= 2,
    },
    {
      target: 'memory flat over the 10-minute soak',
      measured: 'a separate command: `npm run soak -- --minutes 10`',
      met: undefined,
    },
    {
      target: 'stdio: Moat ≥ 3× supergateway throughput at concurrency 32',
      measured: `${ratio(peer32)} (${fmt(cell(STDIO_PATH, 32).proxied.rps, 0)} / ${fmt(cell(PEER_PATH, 32).proxied.rps, 0)} req/s)`,
      met: peer32 >= 3,
    },
    {
      target: "stdio: Moat p50 ≤ ½ supergateway's at concurrency 1",
      measured:
        `${ratio(peer1)} (${fmt(cell(STDIO_PATH, 1).proxied.p50Ms, 3)} / ${fmt(cell(PEER_PATH, 1).proxied.p50Ms, 3)} ms); ` +
        `the minimal HTTP-to-stdio reference ${ratio(floor1)}`,
      met: peer1 <= 0.5,
    },
    ...cliTargets(cli),
  ];
}

/** Issue 19's CLI target and the CLI figures stated beside it. */
function cliTargets(cli: CliTimings): TargetResult[] {
  return [
    {
      target: '`moat list` ≤ 150 ms (whole process, median)',
      measured: `${fmt(cli.listMs, 0)} ms (median of ${cli.runs}; CPU ${fmt(cli.listCpuMs, 0)} ms)`,
      met: cli.listMs <= 150,
    },
    { target: '`moat --help` (whole process, median)', measured: `${fmt(cli.helpMs, 0)} ms`, met: undefined },
    {
      target: '`moat run <URL>` to the first answer through the proxy (median)',
      measured: `${fmt(cli.runMs, 0)} ms`,
      met: undefined,
    },
  ];
}

/** `MOAT_BENCH_ONLY=aggregate`: only item 10, the aggregate endpoint's cells (bench/aggregate.ts). */
async function aggregateOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const aggregate = await aggregateCells(kit);
  const lines = [measuredLine(loadAtStart), '', ...aggregate.lines, '', ...targetTable(aggregate.targets)];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `MOAT_BENCH_ONLY=tool-search`: only item 9 (no proxy process: the policy ranks live tool lists). */
async function toolSearchOnly(): Promise<void> {
  process.stdout.write(`${(await toolSearchSection()).join('\n')}\n`);
}

/**
 * `MOAT_BENCH_ONLY=cli`: only the CLI timings, with MOAT_BENCH_BASELINE=<dist/> the baseline
 * build's in the same rounds.
 */
async function cliOnly(): Promise<void> {
  const loadAtStart = loadavg();
  buildDist();
  const backendUrl = await startServer('./backend-http.ts');
  const cli = await cliTimings(backendUrl, CLI_RUNS, process.env.MOAT_BENCH_BASELINE);
  const lines = [
    measuredLine(loadAtStart),
    '',
    ...cliTable(cli),
    '',
    ...targetTable(cliTargets(cli.current)),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * "Back near idle" means RSS at most this far above the idle RSS: the first load pages in code
 * and warms the JIT (2–3 MB that never go back), and glibc keeps some freed memory in its arenas
 * (only malloc_trim, which Node cannot call, would return it; see docs/performance.md, "Memory").
 */
const NEAR_IDLE_MB = 10;

/** Issue 19's "back near idle within a minute after the load", for one proxy. */
function nearIdleTarget(idle: Memory, afterQuiet: Memory, which?: string): TargetResult {
  return {
    target: `back near idle (≤ idle + ${NEAR_IDLE_MB} MB) within a minute after the load${which ? ` (${which})` : ''}`,
    measured: `${mb(afterQuiet.rss)} after ${QUIET_MS / 1000} s (idle ${mb(idle.rss)}, +${mb(afterQuiet.rss - idle.rss)})`,
    met: afterQuiet.rss <= idle.rss + NEAR_IDLE_MB * MB,
  };
}

async function main(): Promise<void> {
  process.stderr.write(`Moat proxy benchmark on ${cpus().length} CPUs, Node ${process.version}\n`);
  const only = process.env.MOAT_BENCH_ONLY;
  if (only === 'telemetry') return telemetryOnly();
  if (only === 'policies') return policiesOnly();
  if (only === 'guardrails') return guardrailsOnly();
  if (only === 'launch') return launchSettingsOnly();
  if (only === 'memory') return memoryOnly();
  if (only === 'semi-space') return semiSpaceOnly();
  if (only === 'stdio') return stdioOnly();
  if (only === 'cli') return cliOnly();
  if (only === 'peer') return peerOnly();
  if (only === 'tool-search') return toolSearchOnly();
  if (only === 'aggregate') return aggregateOnly();
  if (only !== undefined && only !== '' && only !== 'memory-full')
    throw new Error(
      `MOAT_BENCH_ONLY=${only}: the subsets are "telemetry", "policies", "launch", "memory", "semi-space", "memory-full", "stdio", "cli", "peer", "tool-search" and "aggregate" (unset it to run everything)`,
    );
  const loadAtStart = loadavg();
  buildDist();
  const backendUrl = await startServer('./backend-http.ts');
  const pipeUrl = await startServer('./pipe-proxy.ts', backendUrl);
  const library = await startProxy({ kind: 'http', url: backendUrl }, 'library');
  const libraryIdle = await library.memory();
  await library.stop();
  const httpProxy = await startProxy({ kind: 'http', url: backendUrl }, 'supervisor');
  const idle = await httpProxy.memory();
  process.stderr.write(`  HTTP proxy (memory cells): pid ${httpProxy.pid}\n`);

  const rows: Row[] = [];
  for (const concurrency of [1, 8, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'http', url: backendUrl }, [
        [RAW_PATH, { target: 'http', url: httpProxy.url }],
        [REFERENCE_PATH, { target: 'http', url: pipeUrl }],
      ])),
    );
  }
  const afterLoad = await httpProxy.memory();
  const loadEnded = Date.now();

  // Telemetry on: spans (sampling 0.1) and metrics exported over OTLP/HTTP to a sink that
  // accepts everything, the way a collector on the same host would.
  const otlp = await startOtlpSink();
  const otelProxy = await startProxy({ kind: 'http', url: backendUrl }, 'supervisor', OTEL_CONFIG(otlp.url));
  const otelIdle = await otelProxy.memory();
  for (const concurrency of [1, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'http', url: backendUrl }, [
        [OTEL_PATH, { target: 'http', url: otelProxy.url }],
      ])),
    );
  }
  await otelProxy.stop();
  await otlp.close();

  const sdkBackendUrl = await startServer('./backend-sdk.ts');
  const sdkProxy = await startProxy({ kind: 'http', url: sdkBackendUrl }, 'supervisor');
  const sdkPipeUrl = await startServer('./pipe-proxy.ts', sdkBackendUrl);
  for (const concurrency of [1, 8, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'sdk', url: sdkBackendUrl }, [
        [SDK_PATH, { target: 'sdk', url: sdkProxy.url }],
        [SDK_REFERENCE_PATH, { target: 'sdk', url: sdkPipeUrl }],
      ])),
    );
  }
  await sdkProxy.stop();

  // The HTTP proxy has been idle since its load (the cells above ran other proxies).
  await sleep(Math.max(0, loadEnded + QUIET_MS - Date.now()));
  const afterQuiet = await httpProxy.memory();
  if (only === 'memory-full') {
    const m = (x: Memory) => `${mb(x.rss)} (heap ${mb(x.heapUsed)})`;
    const quietS = fmt((Date.now() - loadEnded) / 1000, 0);
    const lines = [
      ...reportHead(loadAtStart, rows),
      `| proxy (after GC) | idle RSS | RSS after the load | RSS ${quietS} s later, idle meanwhile |`,
      '|---|---|---|---|',
      `| ${RAW_PATH} | ${m(idle)} | ${m(afterLoad)} | ${m(afterQuiet)} |`,
      '',
      ...targetTable([nearIdleTarget(idle, afterQuiet)]),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  const httpSessions = await sessionMemory(httpProxy);
  await httpProxy.stop();

  const stdioProxy = await startProxy({ kind: 'stdio', command: STDIO_BACKEND }, 'supervisor');
  const stdioIdle = await stdioProxy.memory();
  const peer = await startSupergateway(STDIO_BACKEND);
  const stdioReference = await startServer('./stdio-pipe-proxy.ts', JSON.stringify(STDIO_BACKEND));
  for (const concurrency of [1, 8, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'stdio', command: STDIO_BACKEND }, [
        [STDIO_PATH, { target: 'http', url: stdioProxy.url }],
        [PEER_PATH, { target: 'http', url: peer.url }],
        [STDIO_REFERENCE_PATH, { target: 'http', url: stdioReference }],
      ])),
    );
  }
  await peer.stop();
  const stdioSessions = await sessionMemory(stdioProxy);
  await stdioProxy.stop();

  const policies = await policyBench();
  const toolhive = await peerSection();
  process.stderr.write('  CLI timings\n');
  const cli = await cliTimings(backendUrl, CLI_RUNS, process.env.MOAT_BENCH_BASELINE);
  const toolSearch = await toolSearchSection();
  process.stderr.write('  aggregate endpoint\n');
  const aggregate = await aggregateCells(kit);

  const perSession = (s: { before: Memory; after: Memory }) => ({
    rss: (s.after.rss - s.before.rss) / SESSIONS,
    heap: (s.after.heapUsed - s.before.heapUsed) / SESSIONS,
  });
  const memory: MemoryReport = {
    library: libraryIdle,
    idle,
    stdioIdle,
    otelIdle,
    afterLoad,
    afterQuiet,
    perSession: { http: perSession(httpSessions), stdio: perSession(stdioSessions) },
  };
  const allRows = [...rows, ...(policies?.rows ?? []), ...(toolhive?.rows ?? []), ...aggregate.rows];
  const errors = allRows.reduce((n, r) => n + r.direct.errors + r.proxied.errors, 0);
  const plots = writePlots(
    allRows,
    [
      { name: 'direct (HTTP)', path: RAW_PATH, side: 'direct' },
      { name: 'Moat, no policies', path: RAW_PATH, side: 'proxied' },
      { name: 'Moat, full policy stack', path: FULL_STACK_PATH, side: 'proxied' },
      { name: 'Moat, stdio bridge', path: STDIO_PATH, side: 'proxied' },
      { name: 'supergateway, stdio', path: PEER_PATH, side: 'proxied' },
      {
        name: `ToolHive ${TOOLHIVE_VERSION}, full stack without telemetry`,
        path: TOOLHIVE_PATH,
        side: 'proxied',
      },
    ],
    here('../docs/'),
    `${cpus().length} CPUs, Node ${process.version}`,
  );
  const lines: string[] = [
    measuredLine(loadAtStart),
    '',
    ...rowTable(rows),
    '',
    `Errors during load: ${errors}.`,
    '',
    ...(policies ? [...policies.lines, ''] : []),
    ...(toolhive ? [...toolhive.lines, ''] : []),
    ...memoryTable(memory),
    '',
    ...cliTable(cli),
    '',
    ...toolSearch,
    '',
    ...aggregate.lines,
    '',
    ...targetTable([...targets(rows, memory, cli.current, policies), ...aggregate.targets]),
    '',
    `Plots: ${plots.map((p) => p.slice(here('../').length)).join(', ')}.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

try {
  await main();
} finally {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  cleanUpProxies();
}
