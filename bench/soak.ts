/**
 * `npm run soak`: 60 s (or `-- --seconds N`, or `-- --minutes N`: the 10-minute soak of issue 19
 * is `npm run soak -- --minutes 10`) of mixed valid and bad MCP traffic through the whole policy
 * stack — OIDC (real oidc-provider JWTs), Cedar, audit to a file, tool filter, rate limit and tool
 * pinning, sessions in a real Redis — to a real SDK server, with the proxy in a process of its own
 * run the way a real proxy runs (bench/proxy-launcher.ts: the built dist/ under plain Node, the
 * launch settings `moat` gives the supervisor, the supervisor's module graph and idle reducer). Samples the proxy's RSS and heap
 * (after a full GC) every second and reports, after a warm-up, first/last/max and the
 * least-squares slope in MB/min. Memory is flat when both slopes stay under FLAT_MB_PER_MIN.
 * Exits 1 when any valid call failed, a bad input got a 2xx/5xx it should not, or memory grew.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startV2StreamableBackend } from '../test/support/mcp-http-backends.js';
import { startTestOidcProvider } from '../test/support/oidc.js';
import { INIT_BODY, MCP_HEADERS, testConfig } from '../test/support/proxy-harness.js';
import { startRedis } from '../test/support/redis.js';
import { buildDist, cleanUpProxies, startProxy } from './proxy-launcher.js';
import { ENG_MAY_CALL_TOOLS, securedConfig } from './secured-proxy.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    minutes: { type: 'string' },
    workers: { type: 'string', default: '8' },
  },
});
const SECONDS = values.minutes !== undefined ? Number(values.minutes) * 60 : Number(values.seconds);
const WORKERS = Number(values.workers);
if (!(SECONDS >= 8) || !Number.isInteger(WORKERS) || WORKERS < 1) {
  console.error('Usage: npm run soak -- [--seconds N (at least 8) | --minutes N] [--workers N (at least 1)]');
  process.exit(2);
}
/** Start-up, JIT compilation and the young generation's growth settle within this. */
const WARMUP_S = Math.min(60, Math.floor(SECONDS / 4));
/**
 * Memory counts as flat when the slope after warm-up stays under this, for the heap after a full
 * GC and for RSS. Why this bound: the soak makes thousands of calls a minute (5 000–30 000 here,
 * depending on the machine's load), so 1 MB/min is about 35–200 bytes per call (the report prints
 * the exact figure): less than any object a leak would keep per request or session (a session
 * record, an audit or log line, a pending-request entry are hundreds of bytes), while allocator
 * and GC noise after warm-up stays below it.
 */
const FLAT_MB_PER_MIN = 1;

// The proxy runs from dist/ like the moat binary; built before the tokens are issued.
buildDist();
const home = await mkdtemp(join(tmpdir(), 'moat-soak-'));
// The tokens must outlive the run and its set-up (which takes minutes on a loaded machine).
const idp = await startTestOidcProvider([{ id: 'alice', groups: ['eng'] }, { id: 'mallory' }], {
  accessTokenTtlSeconds: SECONDS + 3600,
});
const redis = await startRedis();
const backend = await startV2StreamableBackend();
const tokens = { alice: await idp.token('alice'), mallory: await idp.token('mallory') };

const config = testConfig({
  name: 'soak',
  ...securedConfig(idp, join(home, 'audit.log'), [
    ENG_MAY_CALL_TOOLS,
    'permit(principal, action == Action::"call_tool", resource == Tool::"add");',
  ]),
  tools_filter: ['echo', 'add'],
  rate_limit: {
    per_principal: { requests_per_minute: 1_000_000 },
    tools: { add: { requests_per_minute: 60, burst: 5 } },
  },
  tool_pinning: { mode: 'warn' },
  scaling_config: { session_redis: { address: redis.address } },
});

// The proxy as a real one runs: the built dist/ under plain Node with the launch settings, loaded
// the way `moat supervise` loads it (bench/proxy.ts), with this run's whole RunConfig.
process.env.MOAT_HOME = home;
const proxy = await startProxy({ kind: 'http', url: backend.url }, 'supervisor', config);
const url = proxy.url;
const mcp = `${url}/mcp`;

type Outcome = { status: number; body: string };
async function send(body: string, headers: Record<string, string>): Promise<Outcome> {
  const res = await fetch(mcp, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.text() };
}

const auth = (who: keyof typeof tokens, session?: string) => ({
  authorization: `Bearer ${tokens[who]}`,
  'mcp-protocol-version': '2025-11-25',
  ...(session ? { 'mcp-session-id': session } : {}),
});

async function openSession(who: keyof typeof tokens): Promise<string> {
  const res = await fetch(mcp, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...auth(who) },
    body: JSON.stringify(INIT_BODY),
  });
  await res.text();
  const id = res.headers.get('mcp-session-id');
  if (res.status !== 200 || !id) throw new Error(`initialize failed: HTTP ${res.status}`);
  return id;
}

const call = (id: number, name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** Bad inputs and the statuses each may get (never a 2xx success, never a 5xx). */
const BAD: Array<{
  name: string;
  send: (s: { alice: string; mallory: string }, i: number) => Promise<Outcome>;
  ok: (o: Outcome) => boolean;
}> = [
  {
    name: 'no token',
    send: (_s, i) => send(call(i, 'echo', { text: 'x' }), {}),
    ok: (o) => o.status === 401,
  },
  {
    name: 'forged token',
    send: (_s, i) =>
      send(call(i, 'echo', { text: 'x' }), { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' }),
    ok: (o) => o.status === 401,
  },
  {
    name: 'bad JSON',
    send: (s) => send('{"jsonrpc":"2.0",', auth('alice', s.alice)),
    ok: (o) => o.status === 400,
  },
  {
    name: 'batch',
    send: (s, i) => send(`[${call(i, 'echo', { text: 'x' })}]`, auth('alice', s.alice)),
    ok: (o) => o.status === 400,
  },
  {
    name: 'forbidden tool',
    send: (s, i) => send(call(i, 'echo', { text: 'x' }), auth('mallory', s.mallory)),
    ok: (o) => o.status === 403,
  },
  {
    name: 'filtered tool',
    send: (s, i) => send(call(i, 'secret', {}), auth('alice', s.alice)),
    ok: (o) => o.status === 200 && o.body.includes('Unknown tool'),
  },
  {
    name: "another user's session",
    send: (s) => send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), auth('mallory', s.alice)),
    ok: (o) => o.status === 404,
  },
  {
    name: 'rate-limited tool',
    send: (s, i) => send(call(i, 'add', { a: 1, b: 2 }), auth('mallory', s.mallory)),
    ok: (o) => o.status === 429 || (o.status === 200 && o.body.includes('"3"')),
  },
];

const counts = { valid: 0, validFailed: 0, bad: 0, badWrong: 0 };
const failures: string[] = [];
const samples: Array<{ t: number; mb: number }> = [];
const heapSamples: Array<{ t: number; mb: number }> = [];
const started = Date.now();
const deadline = started + SECONDS * 1000;

async function worker(n: number): Promise<void> {
  const sessions = { alice: await openSession('alice'), mallory: await openSession('mallory') };
  for (let i = 0; Date.now() < deadline; i++) {
    const id = n * 1_000_000 + i;
    if (i % 10 < 7) {
      counts.valid++;
      const text = `w${n}-${i}`;
      const o = await send(call(id, 'echo', { text }), auth('alice', sessions.alice)).catch(
        (err: unknown) => ({ status: 0, body: String(err) }),
      );
      if (o.status !== 200 || !o.body.includes(text)) {
        counts.validFailed++;
        if (failures.length < 20) failures.push(`valid call: HTTP ${o.status} ${o.body.slice(0, 200)}`);
      }
    } else {
      counts.bad++;
      const bad = BAD[i % BAD.length]!;
      const o = await bad.send(sessions, id).catch((err: unknown) => ({ status: 0, body: String(err) }));
      if (!bad.ok(o)) {
        counts.badWrong++;
        if (failures.length < 20) failures.push(`${bad.name}: HTTP ${o.status} ${o.body.slice(0, 200)}`);
      }
    }
  }
}

/** RSS and heap of the proxy after a full GC, about once a second until the deadline. */
async function sampler(): Promise<void> {
  while (Date.now() < deadline) {
    const { rss, heapUsed } = await proxy.memory();
    const t = (Date.now() - started) / 1000;
    samples.push({ t, mb: rss / 2 ** 20 });
    heapSamples.push({ t, mb: heapUsed / 2 ** 20 });
    await sleep(1000);
  }
}
try {
  await Promise.all([sampler(), ...Array.from({ length: WORKERS }, (_, n) => worker(n))]);
} finally {
  await proxy.stop();
  cleanUpProxies();
  await backend.close();
  await redis.stop();
  await idp.close();
  await rm(home, { recursive: true, force: true });
}

/** First, last, max and least-squares slope (MB/min) of the samples after warm-up. */
function trend(all: Array<{ t: number; mb: number }>): { slope: number; text: string } {
  const steady = all.filter((x) => x.t >= WARMUP_S);
  const n = steady.length;
  const meanT = steady.reduce((a, x) => a + x.t, 0) / n;
  const meanM = steady.reduce((a, x) => a + x.mb, 0) / n;
  const slope =
    (steady.reduce((a, x) => a + (x.t - meanT) * (x.mb - meanM), 0) /
      steady.reduce((a, x) => a + (x.t - meanT) ** 2, 0)) *
    60;
  const fmt = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(1));
  return {
    slope,
    text: `first ${fmt(steady[0]?.mb)} MB, last ${fmt(steady.at(-1)?.mb)} MB, max ${fmt(Math.max(...steady.map((x) => x.mb)))} MB, slope ${slope.toFixed(2)} MB/min over ${n} samples`,
  };
}
const heap = trend(heapSamples);
const rss = trend(samples);
const callsPerMinute = ((counts.valid + counts.bad) / SECONDS) * 60;
const flat = heap.slope < FLAT_MB_PER_MIN && rss.slope < FLAT_MB_PER_MIN;
console.log(`soak: ${SECONDS} s, ${WORKERS} workers, full policy stack on Redis`);
console.log(`valid calls: ${counts.valid}, failed: ${counts.validFailed}`);
console.log(`bad inputs: ${counts.bad}, answered wrongly: ${counts.badWrong}`);
console.log(`proxy heap after full GC, after ${WARMUP_S} s warm-up: ${heap.text}`);
console.log(`proxy RSS, after ${WARMUP_S} s warm-up: ${rss.text}`);
console.log(
  `memory ${flat ? 'flat' : '**grew**'}: both slopes must stay under ${FLAT_MB_PER_MIN} MB/min, ` +
    `${((FLAT_MB_PER_MIN * 2 ** 20) / callsPerMinute).toFixed(0)} bytes per call at this run's ${callsPerMinute.toFixed(0)} calls/min`,
);
for (const f of failures) console.log(`  ${f}`);
process.exitCode = counts.validFailed > 0 || counts.badWrong > 0 || !flat ? 1 : 0;
