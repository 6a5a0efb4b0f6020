/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, its CLI as a child
 * process) against a URL and reads the per-scenario `checks.json` files it writes.
 *
 * A scenario passes when none of its checks is FAILURE or WARNING: the suite's own rule for
 * its expected-failures baseline (stricter than its exit code, which ignores warnings).
 *
 * Requirement sets (`--requirements <revision>`) run exactly the scenarios a spec revision requires
 * plus some the suite runs but never scores; `scoring()` says which is which, as the suite's
 * `list --requirements` reports it: `pending` (scenarios the suite itself has not settled),
 * `extension` (optional extensions such as tasks) and `added-after-release`.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const CONFORMANCE_CLI = fileURLToPath(
  new URL('../../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

/**
 * The older suite (0.1.16, `--suite all`), installed once per machine by
 * scripts/conformance-suite.sh (scripts/test.sh runs it); missing, it is a failure, not a skip.
 */
export function olderConformanceCli(): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  const cli = join(
    cache,
    'moat-test/conformance/0.1.16/node_modules/@modelcontextprotocol/conformance/dist/index.js',
  );
  if (!existsSync(cli)) {
    throw new Error(`the conformance suite 0.1.16 is not installed: run bash scripts/conformance-suite.sh`);
  }
  return cli;
}

/**
 * Documented upstream flakes (modelcontextprotocol/conformance#407): scenarios that drive
 * server→client requests race in the suite's client. A failure here is re-run once, never skipped.
 */
export const KNOWN_FLAKES = [
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
];

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  passed: boolean;
  checks: Check[];
}

/** The spec revisions the pinned suite has requirement sets for. */
export type Requirements = '2025-11-25' | '2026-07-28';
export const REQUIREMENT_SETS: Requirements[] = ['2025-11-25', '2026-07-28'];

/** What to run: the whole suite (`--suite all`), a requirement set, or one scenario (at a set's wire). */
export interface Selection {
  requirements?: Requirements;
  scenario?: string;
  /** The suite's CLI: the pinned devDependency unless given (olderConformanceCli). */
  cli?: string;
}

const RUN_TIMEOUT_MS = 480_000;

function selectionArgs({ requirements, scenario }: Selection): string[] {
  // --requirements cannot be combined with --scenario; --spec-version picks the same wire.
  if (scenario) return ['--scenario', scenario, ...(requirements ? ['--spec-version', requirements] : [])];
  return requirements ? ['--requirements', requirements] : ['--suite', 'all'];
}

/** Runs the suite once; returns results by scenario. */
export async function runConformance(
  url: string,
  selection: Selection = {},
): Promise<Map<string, ScenarioResult>> {
  const outDir = mkdtempSync(join(tmpdir(), 'moat-conformance-'));
  try {
    const cli = selection.cli ?? CONFORMANCE_CLI;
    const args = [cli, 'server', '--url', url, '-o', outDir, ...selectionArgs(selection)];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    await once(child, 'close');
    clearTimeout(timer);
    const results = readResults(outDir);
    if (results.size === 0) throw new Error(`the conformance suite wrote no results:\n${output}`);
    return results;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** Result folders are named `server-<scenario>-<ISO timestamp with dashes>`. */
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/;

function readResults(outDir: string): Map<string, ScenarioResult> {
  const results = new Map<string, ScenarioResult>();
  for (const entry of readdirSync(outDir)) {
    const scenario = RESULT_DIR.exec(entry)?.[1];
    if (!scenario) continue;
    const file = join(outDir, entry, 'checks.json');
    // A scenario that crashed writes no checks: that is a failure, not an absence.
    const checks = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as Check[])
      : [
          {
            id: 'checks-written',
            status: 'FAILURE' as const,
            errorMessage: 'the scenario wrote no checks.json',
          },
        ];
    const passed = !checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    results.set(scenario, { scenario, passed, checks });
  }
  return results;
}

export function passing(results: Map<string, ScenarioResult>): string[] {
  return [...results.values()]
    .filter((r) => r.passed)
    .map((r) => r.scenario)
    .sort();
}

/** What failed, readably, for assertion messages. */
export function failures(results: Map<string, ScenarioResult>, scenarios: string[]): string {
  return scenarios
    .map((s) => {
      const bad =
        results.get(s)?.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING') ?? [];
      return `${s}: ${bad.map((c) => `${c.id} ${c.status} ${c.errorMessage ?? ''}`).join('; ') || 'missing'}`;
    })
    .join('\n');
}

/**
 * The whole suite or a requirement set. A failed scenario is re-run once (its second result counts)
 * when it is a documented flake or `retry` names it: a cell expected to pass retries everything
 * it expects, since timing-bound checks (listen streams, SSE polling) can miss under CI load.
 */
export async function runSuite(
  url: string,
  requirements?: Requirements,
  retry: (scenario: string) => boolean = () => false,
  cli?: string,
): Promise<Map<string, ScenarioResult>> {
  const results = await runConformance(url, { requirements, ...(cli ? { cli } : {}) });
  const again = [...results.values()]
    .filter((r) => !r.passed && (KNOWN_FLAKES.includes(r.scenario) || retry(r.scenario)))
    .map((r) => r.scenario);
  for (const scenario of again) {
    const second = (await runConformance(url, { requirements, scenario, ...(cli ? { cli } : {}) })).get(
      scenario,
    );
    if (second) results.set(scenario, second);
  }
  return results;
}

/** Scenarios that pass in `baseline` but not in `results`. */
export function regressions(
  baseline: Map<string, ScenarioResult>,
  results: Map<string, ScenarioResult>,
): string[] {
  return passing(baseline).filter((scenario) => !results.get(scenario)?.passed);
}

/** How a requirement set counts a server scenario. */
export type Scoring = 'required' | 'pending' | 'extension' | 'added-after-release';
const UNSCORED_REASONS = ['pending', 'extension', 'added-after-release'] as const;

const scoringCache = new Map<Requirements, Promise<Map<string, Scoring>>>();

/**
 * The set's server scenarios and how each is scored, from `conformance list --requirements`:
 * the scored "Server scenarios" list, then "Run and reported, but never scored" sections
 * (`  pending (3):` followed by `    - name [server]` lines).
 */
export function scoring(requirements: Requirements): Promise<Map<string, Scoring>> {
  let cached = scoringCache.get(requirements);
  if (!cached) {
    cached = promisify(execFile)(
      process.execPath,
      [CONFORMANCE_CLI, 'list', '--requirements', requirements],
      {
        timeout: 60_000,
      },
    ).then(({ stdout }) => parseScoring(stdout));
    scoringCache.set(requirements, cached);
  }
  return cached;
}

export function parseScoring(listing: string): Map<string, Scoring> {
  const byScenario = new Map<string, Scoring>();
  let section: Scoring | 'client' | undefined;
  for (const line of listing.split('\n')) {
    if (line.startsWith('Server scenarios')) section = 'required';
    else if (line.startsWith('Client scenarios')) section = 'client';
    const reason = UNSCORED_REASONS.find((r) => line.trim().startsWith(`${r} (`));
    if (reason) section = reason;
    const item = /^\s+- (\S+)(?: \[(server|client)\])?$/.exec(line);
    if (!item || !section || section === 'client' || item[2] === 'client') continue;
    byScenario.set(item[1]!, section);
  }
  if (![...byScenario.values()].includes('required')) {
    throw new Error(`conformance list printed no server scenarios:\n${listing}`);
  }
  return byScenario;
}

export interface Tally {
  passed: number;
  failed: number;
}
export type CellSummary = Record<Scoring, Tally> & { checks: Tally };

/** Scenario counts by scoring, and check counts (SUCCESS vs FAILURE/WARNING) over every scenario. */
export function summarize(results: Map<string, ScenarioResult>, scored: Map<string, Scoring>): CellSummary {
  const empty = (): Tally => ({ passed: 0, failed: 0 });
  const summary: CellSummary = {
    required: empty(),
    pending: empty(),
    extension: empty(),
    'added-after-release': empty(),
    checks: empty(),
  };
  for (const result of results.values()) {
    const tally = summary[scored.get(result.scenario) ?? 'required'];
    tally[result.passed ? 'passed' : 'failed'] += 1;
    for (const check of result.checks) {
      if (check.status === 'SUCCESS') summary.checks.passed += 1;
      else if (check.status === 'FAILURE' || check.status === 'WARNING') summary.checks.failed += 1;
    }
  }
  return summary;
}

/** Cell summaries by requirement set, then by cell name. */
export type Summaries = Record<string, Record<string, CellSummary>>;

/** Prints the summaries as a table under `title` and writes them to `.test-state/<file>`. */
export function reportSummaries(title: string, file: string, summaries: Summaries): void {
  const count = (t: Tally) => `${t.passed}/${t.passed + t.failed}`;
  const rows = Object.entries(summaries).flatMap(([set, cells]) =>
    Object.entries(cells).map(([name, s]) => ({
      set,
      cell: name,
      required: count(s.required),
      pending: count(s.pending),
      extension: count(s.extension),
      'added-after-release': count(s['added-after-release']),
      checks: `${s.checks.passed} passed, ${s.checks.failed} failed`,
    })),
  );
  console.log(`${title} (scenarios passed/run by scoring):`);
  console.table(rows);
  mkdirSync('.test-state', { recursive: true });
  writeFileSync(join('.test-state', file), `${JSON.stringify(summaries, null, 2)}\n`);
}
