/**
 * The aggregate endpoint's cells (issue 32): `MOAT_BENCH_ONLY=aggregate npm run bench`, and part of
 * the full run. Six member workloads, each Moat's proxy (a process of its own) in front of the raw
 * HTTP backend (bench/backend-http.ts); the aggregate is Moat's proxy with the aggregator
 * (src/aggregate/) started in the same process over the six member proxies, the way the supervisor
 * of `moat group serve` runs both (bench/proxy.ts, backend kind `aggregate`).
 *   1. `tools/call` of `m0__echo` through the aggregate against `echo` at member m0's own proxy
 *      (the workload's own endpoint), interleaved in the same rounds, at concurrency 1 and 32;
 *      with the aggregate process's CPU per call (steadier than throughput on a shared machine).
 *      In the same rounds, the ceiling of reaching members through their own proxies: a chain of
 *      two plain Moat proxies (a front proxy whose backend is m0's proxy, no aggregator) calling
 *      `echo`, with the front proxy's CPU per call;
 *   2. the same calls from 2026-07-28 clients (no session, bench/load.ts `stateless`): through the
 *      aggregate's stateless face against m0's own proxy, both of which bridge them to the 2025
 *      backend, with the aggregate process's CPU per call;
 *   3. memory per connected client: the aggregate process's RSS and heap (after a forced GC)
 *      before and after CLIENTS sessions are initialized and have listed their tools (each such
 *      session holds one member session per member), per client = delta / CLIENTS. Read before
 *      the load of 1, on a process that has served a few sessions (code paged in, JIT warm).
 */
import type { BenchKit, LoadResult, Row, TargetResult } from './bench-types.js';
import { cpuSeconds, startProxy, type Memory } from './proxy-launcher.js';

const MEMBERS = 6;
const CLIENTS = 200;
/** Sessions opened before the memory reading, not counted. */
const WARM_CLIENTS = 10;
const MB = 1024 * 1024;

export const AGGREGATE_PATH = `aggregate of ${MEMBERS} members (Moat proxy + aggregator) → member's Moat proxy, vs the member's proxy`;
export const STATELESS_PATH = `2026-07-28 clients: aggregate of ${MEMBERS} members (the stateless face) → member's Moat proxy, vs the member's proxy (both bridging to the 2025 backend)`;
export const CHAIN_PATH =
  "Moat proxy → member's Moat proxy (two plain proxies, the aggregate's ceiling), vs the member's proxy";

export interface AggregateBench {
  rows: Row[];
  targets: TargetResult[];
  /** The Markdown section: its cells and its memory. */
  lines: string[];
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const mb = (bytes: number) => `${fmt(bytes / MB, 1)} MB`;

export async function aggregateCells(kit: BenchKit): Promise<AggregateBench> {
  const backendUrl = await kit.startServer('./backend-http.ts');
  const members = [];
  for (let i = 0; i < MEMBERS; i++)
    members.push({ name: `m${i}`, proxy: await startProxy({ kind: 'http', url: backendUrl }, 'supervisor') });
  const front = await startProxy(
    { kind: 'aggregate', members: members.map((m) => ({ name: m.name, url: m.proxy.url })) },
    'supervisor',
  );
  const chain = await startProxy({ kind: 'http', url: members[0]!.proxy.url }, 'supervisor');
  try {
    const memberIdle = await members[0]!.proxy.memory();
    const sessions = async (requests: number): Promise<LoadResult> => {
      const job = { target: 'sessions', listTools: true, url: front.url, concurrency: 8, requests };
      const result = await kit.load({ ...job, maxMs: 120_000 });
      if (result.requests !== requests || result.errors > 0)
        throw new Error(
          `aggregate: ${result.requests} of ${requests} sessions listed tools (${result.errors} errors)`,
        );
      return result;
    };
    await sessions(WARM_CLIENTS);
    const before = await front.memory();
    await sessions(CLIENTS);
    const after = await front.memory();

    const rows: Row[] = [];
    /** User+system CPU per call (warm-ups included) of the aggregate process and of the chain's front proxy, by concurrency. */
    const cpu = new Map<number, { aggregate: number; chain: number }>();
    for (const concurrency of [1, 32]) {
      const before = { aggregate: cpuSeconds(front.pid), chain: cpuSeconds(chain.pid) };
      const [aggregate, chained] = await kit.compare(
        concurrency,
        { target: 'http', url: members[0]!.proxy.url },
        [
          [AGGREGATE_PATH, { target: 'http', url: front.url, toolName: 'm0__echo' }],
          [CHAIN_PATH, { target: 'http', url: chain.url }],
        ],
      );
      const perCall = (pid: number, since: number, row: Row) =>
        ((cpuSeconds(pid) - since) * 1e6) / (row.proxied.requests + kit.warmups(row));
      cpu.set(concurrency, {
        aggregate: perCall(front.pid, before.aggregate, aggregate!),
        chain: perCall(chain.pid, before.chain, chained!),
      });
      rows.push(aggregate!, chained!);
    }
    /** The same calls from 2026-07-28 clients (no session): the aggregate's stateless face, against the member's own proxy. */
    const statelessCpu = new Map<number, number>();
    for (const concurrency of [1, 32]) {
      const since = cpuSeconds(front.pid);
      const [row] = await kit.compare(concurrency, { target: 'stateless', url: members[0]!.proxy.url }, [
        [STATELESS_PATH, { target: 'stateless', url: front.url, toolName: 'm0__echo' }],
      ]);
      statelessCpu.set(
        concurrency,
        ((cpuSeconds(front.pid) - since) * 1e6) / (row!.proxied.requests + kit.warmups(row!)),
      );
      rows.push(row!);
    }
    const perClient = (pick: (m: Memory) => number) => (pick(after) - pick(before)) / CLIENTS / 1024;
    const at = (c: number, path = AGGREGATE_PATH) =>
      rows.find((r) => r.concurrency === c && r.path === path)!;
    const throughput32 = at(32).proxied.rps / at(32).direct.rps;
    const ofCeiling = (c: number) => at(c).proxied.rps / at(c, CHAIN_PATH).proxied.rps;
    const statelessRatio = (c: number) =>
      at(c, STATELESS_PATH).proxied.rps / at(c, STATELESS_PATH).direct.rps;
    const p50At1 = at(1).proxied.p50Ms / at(1).direct.p50Ms;
    const m = (x: Memory) => `${mb(x.rss)} (heap ${mb(x.heapUsed)})`;
    const lines = [
      `Aggregate endpoint: \`tools/call\` of \`m0__echo\` through the aggregate (Moat's proxy and the aggregator in one process, over ${MEMBERS} members) against \`echo\` at member m0's own Moat proxy, same rounds; each member is Moat's proxy in front of the raw HTTP backend.`,
      '',
      ...kit.rowTable(rows),
      '',
      "| concurrency | CPU per call, aggregate process (proxy + aggregator) | CPU per call, the chain's front proxy | aggregate throughput ÷ the chain's |",
      '|---|---|---|---|',
      ...[...cpu].map(
        ([c, us]) => `| ${c} | ${fmt(us.aggregate, 0)} µs | ${fmt(us.chain, 0)} µs | ${fmt(ofCeiling(c))}× |`,
      ),
      '',
      '| concurrency | CPU per call, aggregate process, 2026-07-28 clients |',
      '|---|---|',
      ...[...statelessCpu].map(([c, us]) => `| ${c} | ${fmt(us, 0)} µs |`),
      '',
      `| memory (after GC) | RSS (heap) |`,
      '|---|---|',
      `| a member's proxy, idle | ${m(memberIdle)} |`,
      `| aggregate process (proxy + aggregator), after ${WARM_CLIENTS} sessions | ${m(before)} |`,
      `| aggregate process after ${CLIENTS} more sessions, each initialized and tools listed (${MEMBERS} member sessions each) | ${m(after)} |`,
      `| per connected client, ${MEMBERS} members | ${fmt(
        perClient((x) => x.heapUsed),
        1,
      )} KB heap, ${fmt(
        perClient((x) => x.rss),
        1,
      )} KB RSS |`,
    ];
    const targets: TargetResult[] = [
      {
        target: "aggregate tools/call throughput ≥ 0.8× the member's own endpoint at concurrency 32",
        measured: `${fmt(throughput32, 3)}× (${fmt(at(32).proxied.rps, 0)} / ${fmt(at(32).direct.rps, 0)} req/s)`,
        met: throughput32 >= 0.8,
      },
      {
        target:
          "aggregate tools/call throughput against its ceiling (two plain Moat proxies, front → member's proxy), concurrency 1 / 32",
        measured: `${fmt(ofCeiling(1), 3)}× / ${fmt(ofCeiling(32), 3)}×`,
        met: undefined,
      },
      {
        target:
          "2026-07-28 clients: aggregate tools/call throughput against the member's own endpoint, concurrency 1 / 32",
        measured: `${fmt(statelessRatio(1), 3)}× / ${fmt(statelessRatio(32), 3)}×`,
        met: undefined,
      },
      {
        target: "aggregate tools/call p50 at concurrency 1 against the member's own endpoint",
        measured: `${fmt(p50At1, 3)}× (${fmt(at(1).proxied.p50Ms, 3)} / ${fmt(at(1).direct.p50Ms, 3)} ms)`,
        met: undefined,
      },
      {
        target: `aggregate memory per connected client (${MEMBERS} members, ${CLIENTS} clients)`,
        measured: `${fmt(
          perClient((x) => x.heapUsed),
          1,
        )} KB heap, ${fmt(
          perClient((x) => x.rss),
          1,
        )} KB RSS`,
        met: undefined,
      },
    ];
    return { rows, targets, lines };
  } finally {
    await Promise.all([front.stop(), chain.stop()]);
    await Promise.all(members.map((x) => x.proxy.stop()));
  }
}
