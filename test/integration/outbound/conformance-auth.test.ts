/**
 * The official MCP conformance suite's client authorization scenarios, run against Moat's outbound
 * OAuth client (test/fixtures/outbound/oauth-conformance-client.ts). The passing set is asserted
 * exactly, so a regression and an improvement both show up (update docs/remote-auth.md with it).
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

/** The `auth` suite plus the back-compat and draft authorization scenarios. */
const EXTRA = [
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
];

export const EXPECTED_PASSING = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  ...EXTRA,
].sort();

/** Not passing, and why (also in docs/remote-auth.md). */
export const EXPECTED_FAILING = {
  'auth/basic-cimd': 'client ID metadata documents are not implemented; Moat registers with DCR (a warning)',
  'auth/scope-step-up':
    'since conformance 0.2.0-alpha.12 the first authorization request asks for the metadata scope (mcp:profile), not the challenged mcp:basic (a warning)',
};

let out: string;
const run = promisify(execFile);

async function conformance(args: string[]): Promise<void> {
  // The suite exits 1 when any scenario fails; the checks files are what we judge.
  await run(process.execPath, [CONFORMANCE, 'client', '--command', CLIENT, '-o', out, ...args], {
    cwd: ROOT,
    timeout: 280_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_OPTIONS: '' },
  }).catch((err: { code?: number }) => {
    if (typeof err.code !== 'number') throw err;
  });
}

/** Scenario → passed (every check SUCCESS, no warnings), from the checks.json files. */
async function results(): Promise<Record<string, boolean>> {
  const byScenario: Record<string, boolean> = {};
  const dirs = await readdir(join(out, 'auth'));
  for (const dir of dirs) {
    const scenario = `auth/${dir.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '')}`;
    const checks = JSON.parse(await readFile(join(out, 'auth', dir, 'checks.json'), 'utf8')) as Array<{
      status: string;
    }>;
    byScenario[scenario] =
      checks.length > 0 && checks.every((c) => c.status === 'SUCCESS' || c.status === 'INFO');
  }
  return byScenario;
}

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'moat-conformance-auth-'));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('conformance client --suite auth against the outbound OAuth client', () => {
  it('passes exactly the expected scenarios', { timeout: 600_000 }, async () => {
    await Promise.all([
      conformance(['--suite', 'auth', '--timeout', '60000']),
      ...EXTRA.map((scenario) => conformance(['--scenario', scenario, '--timeout', '60000'])),
    ]);
    const byScenario = await results();
    const passing = Object.keys(byScenario)
      .filter((s) => byScenario[s])
      .sort();
    const failing = Object.keys(byScenario)
      .filter((s) => !byScenario[s])
      .sort();
    expect(passing).toEqual(EXPECTED_PASSING);
    expect(failing).toEqual(Object.keys(EXPECTED_FAILING).sort());
  });
});
