/**
 * The official MCP conformance suite's client authorization scenarios (the pinned
 * @modelcontextprotocol/conformance 0.2.0-alpha.12), run against Moat's outbound OAuth client
 * (test/fixtures/outbound/oauth-conformance-client.ts):
 *
 * - `client --suite auth` (14 scenarios) at its default wire revision, 2025-11-25, plus the two
 *   2025-03-26 back-compat scenarios;
 * - every `auth/` scenario of `--requirements 2026-07-28` (25: the suite's 14 again, the draft
 *   resource/offline-access ones, RFC 9207 `iss`, authorization-server migration, metadata issuer
 *   mismatch) at the 2026-07-28 wire.
 *
 * Each scenario runs as its own `conformance client --scenario` process, so its verdict includes
 * the client's exit code; it passes when that process exits 0 and every check is SUCCESS or INFO
 * (a WARNING fails it). The passing set is asserted exactly, so a regression and an improvement
 * both show up (update docs/remote-auth.md with it).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CONFORMANCE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const CLIENT = `${process.execPath} --import tsx ${join(ROOT, 'test/fixtures/outbound/oauth-conformance-client.ts')}`;
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
/** Scenario processes at a time: each starts an authorization server, an MCP server and the client. */
const PARALLEL = 4;

/** `client --suite auth` of the pinned version. */
const AUTH_SUITE = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
];
const BACK_COMPAT = ['auth/2025-03-26-oauth-metadata-backcompat', 'auth/2025-03-26-oauth-endpoint-fallback'];
/** What `--requirements 2026-07-28` adds to the suite's scenarios (asserted against `list`). */
const MODERN_ONLY = [
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
];

const RUNS: Array<{ scenario: string; wire: string }> = [
  ...[...AUTH_SUITE, ...BACK_COMPAT].map((scenario) => ({ scenario, wire: LEGACY })),
  ...[...AUTH_SUITE, ...MODERN_ONLY].map((scenario) => ({ scenario, wire: MODERN })),
];
const label = (run: { scenario: string; wire: string }): string => `${run.scenario} @ ${run.wire}`;

export const EXPECTED_PASSING = RUNS.map(label).sort();

/** Not passing, and why (also in docs/remote-auth.md). */
export const EXPECTED_FAILING: Record<string, string> = {};

let out: string;
const run = promisify(execFile);

/** Runs one scenario; resolves with the process's exit code (the suite's verdict). */
async function conformance(args: string[]): Promise<number> {
  return run(process.execPath, [CONFORMANCE, ...args], {
    cwd: ROOT,
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_OPTIONS: '' },
  }).then(
    () => 0,
    (err: { code?: number }) => {
      if (typeof err.code !== 'number') throw err;
      return err.code;
    },
  );
}

/** True when every check of the scenario's checks.json is SUCCESS or INFO. */
async function checksPass(dir: string, scenario: string): Promise<boolean> {
  const name = scenario.slice('auth/'.length);
  const [result] = (await readdir(join(dir, 'auth'))).filter((d) =>
    new RegExp(`^${name}-\\d{4}-\\d{2}-\\d{2}T`).test(d),
  );
  if (!result) return false;
  const checks = JSON.parse(await readFile(join(dir, 'auth', result, 'checks.json'), 'utf8')) as Array<{
    status: string;
  }>;
  return checks.length > 0 && checks.every((c) => c.status === 'SUCCESS' || c.status === 'INFO');
}

async function verdict(runSpec: { scenario: string; wire: string }, index: number): Promise<boolean> {
  const dir = join(out, String(index));
  const code = await conformance([
    'client',
    '--command',
    CLIENT,
    '--scenario',
    runSpec.scenario,
    // The 2025-03-26 scenarios left the timeline in 2025-06-18; without a version they run at 2025-11-25.
    ...(BACK_COMPAT.includes(runSpec.scenario) ? [] : ['--spec-version', runSpec.wire]),
    '--timeout',
    '60000',
    '-o',
    dir,
  ]);
  return code === 0 && (await checksPass(dir, runSpec.scenario));
}

/** Runs `task` over `items`, `limit` at a time. */
async function pool<T, R>(
  items: T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'moat-conformance-auth-'));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('conformance client auth scenarios against the outbound OAuth client', () => {
  it('runs exactly the auth scenarios the 2026-07-28 requirement set names', async () => {
    const { stdout } = await run(process.execPath, [CONFORMANCE, 'list', '--requirements', MODERN], {
      cwd: ROOT,
      timeout: 30_000,
    });
    const client = stdout.slice(stdout.indexOf('Client scenarios'), stdout.indexOf('Run and reported'));
    const named = [...client.matchAll(/^\s+- (auth\/\S+)$/gm)].map((m) => m[1]).sort();
    expect(named).toEqual([...AUTH_SUITE, ...MODERN_ONLY].sort());
  });

  // 41 scenario processes, 4 at a time: about 3 minutes on two busy cores; the bound leaves room.
  it('passes exactly the expected scenarios', { timeout: 900_000 }, async () => {
    const passed = await pool(RUNS, PARALLEL, verdict);
    const byRun = RUNS.map((r, i) => [label(r), passed[i]] as const);
    const passing = byRun
      .filter(([, ok]) => ok)
      .map(([name]) => name)
      .sort();
    const failing = byRun
      .filter(([, ok]) => !ok)
      .map(([name]) => name)
      .sort();
    expect(failing).toEqual(Object.keys(EXPECTED_FAILING).sort());
    expect(passing).toEqual(EXPECTED_PASSING);
  });
});
