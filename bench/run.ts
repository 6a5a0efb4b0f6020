/**
 * Moat's proxy benchmark: `npm run bench` (or `node --import tsx bench/run.ts`).
 *
 * Separate processes for the load generator (bench/load.ts), the proxy (bench/proxy.ts) and the
 * backend (bench/backend-*.ts), all on loopback. Every proxied figure is reported as a ratio to a
 * direct connection to the same backend measured in the same run:
 *   1. streamable-HTTP tools/call through the HTTP forwarder, concurrency 1, 8, 32; and through a
 *      minimal Node.js proxy (bench/pipe-proxy.ts), what one Node.js HTTP hop costs here
 *   2. the same through the official MCP SDK on both ends (SDK client → SDK server, stateful
 *      sessions, SSE-framed answers): protocol-correct traffic, what an MCP host and server do
 *   3. the stdio path: HTTP → stdio bridge → stdio server, against the stdio server's pipes directly
 *   4. the HTTP forwarder with telemetry on (OTLP traces at sampling 0.1 and metrics), as a ratio
 *      to direct and to telemetry off
 *   5. proxy RSS idle (the process as `moat supervise` runs it, and the proxy library alone) and
 *      after load; memory per idle session (10 000 sessions, memory store)
 *   6. the policy stack (bench/policies.ts): JWT, Cedar, audit, tool filter and telemetry together
 *      and one at a time, raw and SDK
 * Prints a Markdown report. Every loop is bounded by request count and by time.
 * `MOAT_BENCH_ONLY=telemetry npm run bench` runs only item 4's cells, telemetry off and on
 * interleaved in the same rounds at concurrency 1 and 32 (about 2 minutes);
 * `MOAT_BENCH_ONLY=policies` only item 6 (MOAT_BENCH_BASELINE=<another build's dist/> adds that
 * build's full stack to the same rounds).
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { policyCells, type BenchKit, type LoadResult, type Row } from './policies.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const TSX = ['--import', 'tsx'];
const STDIO_BACKEND = [process.execPath, ...TSX, here('./backend-stdio.ts')];
const RUN_MAX_MS = 10_000;
const ROUNDS = 5;
const SESSIONS = 10_000;
const MB = 1024 * 1024;
const RAW_PATH = 'streamable HTTP (Moat)';
const OTEL_PATH = 'streamable HTTP (Moat), OTel on, sampling 0.1';
const SDK_PATH = 'streamable HTTP, MCP SDK client and server (Moat)';

interface Memory {
  rss: number;
  heapUsed: number;
}

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

interface ProxyProcess {
  url: string;
  memory(): Promise<Memory>;
  stop(): Promise<void>;
}

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

let script: string | undefined;

async function startProxy(
  backend: object,
  embed: 'supervisor' | 'library',
  extraConfig: object = {},
  dist = here('../dist/'),
): Promise<ProxyProcess> {
  script ??= proxyScript();
  const child = fork(script, [JSON.stringify(backend), embed, JSON.stringify(extraConfig)], {
    env: { ...process.env, MOAT_BENCH_DIST: pathToFileURL(`${dist.replace(/\/+$/, '')}/`).href },
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  started.push(child);
  const [ready] = (await once(child, 'message')) as [{ url: string }];
  return {
    url: ready.url,
    memory: async () => {
      child.send({ type: 'memory' });
      const [m] = (await once(child, 'message')) as [Memory];
      return { rss: m.rss, heapUsed: m.heapUsed };
    },
    stop: async () => {
      child.send({ type: 'stop' });
      await once(child, 'exit');
    },
  };
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
const fmt = (n: number, digits = 2) => n.toFixed(digits);
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
 * target, all against the same direct runs.
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
    d.push(await load({ ...direct, ...common }));
    for (const [i, [, target]] of proxied.entries()) p[i]!.push(await load({ ...target, ...common }));
  }
  return proxied.map(([path], i) => {
    const row = { path, concurrency, direct: summarize(d), proxied: summarize(p[i]!) };
    process.stderr.write(
      `  ${path} c=${concurrency}: direct ${fmt(row.direct.rps, 0)} rps, proxied ${fmt(row.proxied.rps, 0)} rps\n`,
    );
    return row;
  });
}

async function sessionMemory(proxy: ProxyProcess): Promise<{ before: Memory; after: Memory }> {
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

/** The proxy runs from dist/ like the moat binary: build it first. */
function build(): void {
  const result = spawnSync(
    process.execPath,
    [here('../node_modules/typescript/bin/tsc'), '-p', here('../tsconfig.build.json')],
    {
      stdio: 'inherit',
    },
  );
  if (result.status !== 0 && !existsSync(here('../dist/proxy/index.js'))) throw new Error('the build failed');
}

/** `MOAT_BENCH_ONLY=telemetry`: only telemetry off and on, interleaved in the same rounds. */
async function telemetryOnly(): Promise<void> {
  const loadAtStart = loadavg();
  build();
  const backendUrl = await startServer('./backend-http.ts');
  const offProxy = await startProxy({ kind: 'http', url: backendUrl }, 'supervisor');
  const otlp = await startOtlpSink();
  const otelProxy = await startProxy({ kind: 'http', url: backendUrl }, 'supervisor', OTEL_CONFIG(otlp.url));
  const rows: Row[] = [];
  for (const concurrency of [1, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'http', url: backendUrl }, [
        [RAW_PATH, { target: 'http', url: offProxy.url }],
        [OTEL_PATH, { target: 'http', url: otelProxy.url }],
      ])),
    );
  }
  await Promise.all([offProxy.stop(), otelProxy.stop()]);
  await otlp.close();
  const lines = [measuredLine(loadAtStart), '', ...rowTable(rows), ''];
  for (const concurrency of [1, 32]) {
    const cell = (path: string) => rows.find((r) => r.path === path && r.concurrency === concurrency)!;
    const ratio = cell(OTEL_PATH).proxied.rps / cell(RAW_PATH).proxied.rps;
    lines.push(`OTel on (sampling 0.1) vs off, throughput at concurrency ${concurrency}: ${fmt(ratio, 3)}×`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

const kit: BenchKit = { startServer, startProxy, startOtlpSink, compare, rowTable };

/** `MOAT_BENCH_ONLY=policies`: only the policy-stack cells (bench/policies.ts). */
async function policiesOnly(): Promise<void> {
  const loadAtStart = loadavg();
  build();
  const { lines } = await policyCells(kit);
  process.stdout.write(`${[measuredLine(loadAtStart), '', ...lines].join('\n')}\n`);
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

function rowTable(rows: Row[]): string[] {
  const lines = [
    '| path | concurrency | direct req/s | proxied req/s | throughput ratio | direct p50 / p99 (ms) | proxied p50 / p99 (ms) | p50 ratio | p99 ratio |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.path} | ${r.concurrency} | ${fmt(r.direct.rps, 0)} | ${fmt(r.proxied.rps, 0)} | ${fmt(r.proxied.rps / r.direct.rps)}× | ` +
        `${fmt(r.direct.p50Ms, 3)} / ${fmt(r.direct.p99Ms, 3)} | ${fmt(r.proxied.p50Ms, 3)} / ${fmt(r.proxied.p99Ms, 3)} | ` +
        `${fmt(r.proxied.p50Ms / r.direct.p50Ms)}× | ${fmt(r.proxied.p99Ms / r.direct.p99Ms)}× |`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  process.stderr.write(`Moat proxy benchmark on ${cpus().length} CPUs, Node ${process.version}\n`);
  const only = process.env.MOAT_BENCH_ONLY;
  if (only === 'telemetry') return telemetryOnly();
  if (only === 'policies') return policiesOnly();
  if (only !== undefined && only !== '')
    throw new Error(
      `MOAT_BENCH_ONLY=${only}: the subsets are "telemetry" and "policies" (unset it to run everything)`,
    );
  const loadAtStart = loadavg();
  build();
  const backendUrl = await startServer('./backend-http.ts');
  const pipeUrl = await startServer('./pipe-proxy.ts', backendUrl);
  const library = await startProxy({ kind: 'http', url: backendUrl }, 'library');
  const libraryIdle = await library.memory();
  await library.stop();
  const httpProxy = await startProxy({ kind: 'http', url: backendUrl }, 'supervisor');
  const idle = await httpProxy.memory();

  const rows: Row[] = [];
  for (const concurrency of [1, 8, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'http', url: backendUrl }, [
        [RAW_PATH, { target: 'http', url: httpProxy.url }],
        ['streamable HTTP (minimal Node.js proxy, reference)', { target: 'http', url: pipeUrl }],
      ])),
    );
  }
  const afterLoad = await httpProxy.memory();
  const httpSessions = await sessionMemory(httpProxy);
  await httpProxy.stop();

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
  for (const concurrency of [1, 8, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'sdk', url: sdkBackendUrl }, [
        [SDK_PATH, { target: 'sdk', url: sdkProxy.url }],
      ])),
    );
  }
  await sdkProxy.stop();

  const stdioProxy = await startProxy({ kind: 'stdio', command: STDIO_BACKEND }, 'supervisor');
  const stdioIdle = await stdioProxy.memory();
  for (const concurrency of [1, 8, 32]) {
    rows.push(
      ...(await compare(concurrency, { target: 'stdio', command: STDIO_BACKEND }, [
        ['stdio (Moat)', { target: 'http', url: stdioProxy.url }],
      ])),
    );
  }
  const stdioSessions = await sessionMemory(stdioProxy);
  await stdioProxy.stop();

  const policies = await policyCells(kit);

  const lines: string[] = [measuredLine(loadAtStart), '', ...rowTable(rows)];
  const errors = rows.reduce((n, r) => n + r.direct.errors + r.proxied.errors, 0);
  lines.push('');
  lines.push(`Errors during load: ${errors}.`);
  lines.push('');
  const perSession = (s: { before: Memory; after: Memory }) => ({
    rss: (s.after.rss - s.before.rss) / SESSIONS,
    heap: (s.after.heapUsed - s.before.heapUsed) / SESSIONS,
  });
  const httpPer = perSession(httpSessions);
  const stdioPer = perSession(stdioSessions);
  lines.push('| memory (proxy process, after GC) | value |');
  lines.push('|---|---|');
  lines.push(
    `| idle RSS after start, as \`moat supervise\` runs it (HTTP backend) | ${mb(idle.rss)} (heap ${mb(idle.heapUsed)}) |`,
  );
  lines.push(
    `| idle RSS after start, as \`moat supervise\` runs it (stdio backend) | ${mb(stdioIdle.rss)} (heap ${mb(stdioIdle.heapUsed)}) |`,
  );
  lines.push(
    `| idle RSS after start, proxy library alone (HTTP backend) | ${mb(libraryIdle.rss)} (heap ${mb(libraryIdle.heapUsed)}) |`,
  );
  lines.push(
    `| idle RSS after start, telemetry on (OTLP traces and metrics) | ${mb(otelIdle.rss)} (heap ${mb(otelIdle.heapUsed)}) |`,
  );
  lines.push(`| RSS after the HTTP load runs | ${mb(afterLoad.rss)} (heap ${mb(afterLoad.heapUsed)}) |`);
  lines.push(
    `| per idle session, HTTP forwarder (${SESSIONS} sessions) | ${fmt(httpPer.heap / 1024)} KB heap, ${fmt(httpPer.rss / 1024)} KB RSS |`,
  );
  lines.push(
    `| per idle session, stdio bridge (${SESSIONS} sessions) | ${fmt(stdioPer.heap / 1024)} KB heap, ${fmt(stdioPer.rss / 1024)} KB RSS |`,
  );
  lines.push('');
  const cell = (path: string, concurrency: number) =>
    rows.find((r) => r.path === path && r.concurrency === concurrency)!;
  const throughput = (r: Row) => r.proxied.rps / r.direct.rps;
  const p50 = (r: Row) => r.proxied.p50Ms / r.direct.p50Ms;
  const target = (ok: boolean) => (ok ? 'met' : '**missed**');
  const both = (measure: (r: Row) => number, concurrency: number, ok: (ratio: number) => boolean) => {
    const raw = measure(cell(RAW_PATH, concurrency));
    const sdk = measure(cell(SDK_PATH, concurrency));
    return (
      `raw JSON-RPC over HTTP, minimal backend: ${fmt(raw, 3)}×; MCP SDK client and server: ${fmt(sdk, 3)}× | ` +
      `${target(ok(raw))} (raw), ${target(ok(sdk))} (SDK) |`
    );
  };
  const worstSession = Math.max(httpPer.heap, httpPer.rss, stdioPer.heap, stdioPer.rss) / 1024;
  lines.push('| target | measured | |');
  lines.push('|---|---|---|');
  lines.push(
    `| throughput ≥ 0.6× direct at concurrency 32, no policies | ${both(throughput, 32, (x) => x >= 0.6)}`,
  );
  lines.push(`| p50 at concurrency 1 ≤ 1.5× direct | ${both(p50, 1, (x) => x <= 1.5)}`);
  const otelRatio = throughput(cell(OTEL_PATH, 32)) / throughput(cell(RAW_PATH, 32));
  lines.push(
    `| OTel on (sampling 0.1) vs off, throughput at concurrency 32 | ${fmt(otelRatio, 3)}× of telemetry off; p50 at concurrency 1: ${fmt(p50(cell(OTEL_PATH, 1)), 3)}× direct vs ${fmt(p50(cell(RAW_PATH, 1)), 3)}× off | (no target) |`,
  );
  lines.push(
    `| idle proxy RSS ≤ 80 MB | ${mb(idle.rss)} as \`moat supervise\` runs it; ${mb(libraryIdle.rss)} for the proxy library alone | ${target(idle.rss <= 80 * MB)} |`,
  );
  lines.push(
    `| ≤ 10 KB per idle session (memory store) | ${fmt(worstSession)} KB (worst of heap/RSS, both paths) | ${target(worstSession <= 10)} |`,
  );
  lines.push('', '## Policy stack', '', ...policies.lines);
  process.stdout.write(`${lines.join('\n')}\n`);
}

try {
  await main();
} finally {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  if (script) rmSync(dirname(script), { recursive: true, force: true });
}
