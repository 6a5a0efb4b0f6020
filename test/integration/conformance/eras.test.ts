/**
 * The official MCP conformance suite's two requirement sets (`--requirements 2025-11-25` and
 * `--requirements 2026-07-28`) against two fixture servers, directly (the baselines) and through
 * Moat over HTTP and over stdio:
 *   - the 2025-era fixture (v1 SDK, test/fixtures/conformance/), a 2025-11-25 server;
 *   - the 2026-era fixture (v2 SDK, test/fixtures/conformance-2026/), which serves both eras.
 * The goal (issue 18): through Moat, the 2025-11-25 set passes 100% of what passes directly, and the
 * 2026-07-28 set passes, in front of either fixture, every scenario that passes directly against
 * the 2026-era fixture.
 * The counts per cell are printed and written to .test-state/conformance-eras.json.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContainerRuntime } from '../../../src/runtime/types.js';
import { startConformanceContainer } from '../../fixtures/conformance/image.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import {
  FIXTURE_2026_MAIN,
  FIXTURE_MAIN,
  httpFixture,
  type HttpFixture,
} from '../../fixtures/conformance/spawn.js';
import { testRuntime } from '../../support/podman.js';
import {
  failures,
  passing,
  REQUIREMENT_SETS,
  reportSummaries,
  runSuite,
  scoring,
  summarize,
  type Requirements,
  type ScenarioResult,
  type Summaries,
} from './suite.js';

/**
 * What the 2026-era fixture itself cannot do in the 2026-07-28 set: the tasks extension scenarios
 * (`io.modelcontextprotocol/tasks`, run but never scored). The v2 SDK 2.4.0 does not implement
 * tasks, so none of their tools (`slow_compute`, `failing_job`, `test_tool_with_task`) or methods
 * (`tasks/get`, `tasks/update`, `tasks/cancel`) exist. (`tasks-status-notifications` is not here:
 * it emits no checks and so passes.)
 */
const FIXTURE_2026_CANNOT = [
  'tasks-capability-negotiation',
  'tasks-dispatch-and-envelope',
  'tasks-lifecycle',
  'tasks-mrtr-composition',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-request-state-removal',
  'tasks-required-task-error',
  'tasks-wire-fields',
];

/**
 * What the 2025-era fixture passes of the 2026-07-28 set by itself: nothing else, since a
 * 2025-11-25 server refuses every request that comes without `initialize` (400 "Server not
 * initialized") — that is what the bridge is for.
 */
const FIXTURE_2025_PASSES_AT_2026 = [
  // Accepts a JSON-RPC error in answer to malformed inputResponses, and the refusal is one.
  'input-required-result-validate-input',
  // Emits no checks at all.
  'tasks-status-notifications',
];

const SUITE_TIMEOUT = 600_000;

type Fixture = '2025' | '2026';
type Via = 'direct' | 'moat-http' | 'moat-stdio';
const cellName = (fixture: Fixture, via: Via) => `${via} ${fixture}-era fixture`;

const fixtures = new Map<Fixture, HttpFixture>();
const moats: MoatUnderTest[] = [];
/** Results by requirement set, then by cell name. */
const results = new Map<Requirements, Map<string, Map<string, ScenarioResult>>>(
  REQUIREMENT_SETS.map((set) => [set, new Map()]),
);
const summaries: Summaries = {};

function cell(set: Requirements, fixture: Fixture, via: Via): Map<string, ScenarioResult> {
  const found = results.get(set)?.get(cellName(fixture, via));
  if (!found) throw new Error(`no results for ${set} ${cellName(fixture, via)}`);
  return found;
}

function failing(run: Map<string, ScenarioResult>): string[] {
  return [...run.values()]
    .filter((r) => !r.passed)
    .map((r) => r.scenario)
    .sort();
}

async function record(set: Requirements, name: string, run: Map<string, ScenarioResult>): Promise<void> {
  results.get(set)?.set(name, run);
  (summaries[set] ??= {})[name] = summarize(run, await scoring(set));
}

/**
 * Which failed scenarios a cell re-runs once: those it is expected to pass. Nothing for the
 * 2025-era fixture directly at 2026-07-28 (it is expected to fail), everything else at
 * 2025-11-25, and at 2026-07-28 all but what the fixture cannot do.
 */
function expectedToPass(set: Requirements, fixture: Fixture, via: Via): (scenario: string) => boolean {
  if (set === '2025-11-25') return () => true;
  if (fixture === '2025' && via === 'direct') return () => false;
  return (s) => !FIXTURE_2026_CANNOT.includes(s);
}

/** Both sets, one after the other, against one URL (cells run concurrently with each other). */
async function runCell(fixture: Fixture, via: Via, url: string): Promise<void> {
  for (const set of REQUIREMENT_SETS) {
    await record(set, cellName(fixture, via), await runSuite(url, set, expectedToPass(set, fixture, via)));
  }
}

beforeAll(async () => {
  const [old, modern] = await Promise.all([httpFixture(FIXTURE_MAIN), httpFixture(FIXTURE_2026_MAIN)]);
  fixtures.set('2025', old).set('2026', modern);
  const cells: Array<[Fixture, Via, string]> = [];
  for (const [fixture, main] of [
    ['2025', FIXTURE_MAIN],
    ['2026', FIXTURE_2026_MAIN],
  ] as const) {
    const { url } = fixtures.get(fixture)!;
    const overHttp = await moatInFrontOf({ kind: 'http', url, transport: 'streamable-http', remote: false });
    const overStdio = await moatInFrontOf('stdio', {}, { fixtureMain: main });
    moats.push(overHttp, overStdio);
    cells.push(
      [fixture, 'direct', url],
      [fixture, 'moat-http', `${overHttp.proxy.url}/mcp`],
      [fixture, 'moat-stdio', `${overStdio.proxy.url}/mcp`],
    );
  }
  await Promise.all(cells.map(([fixture, via, url]) => runCell(fixture, via, url)));
}, SUITE_TIMEOUT);

afterAll(async () => {
  await Promise.all([...moats.map((moat) => moat.stop()), ...[...fixtures.values()].map((f) => f.stop())]);
  reportSummaries('conformance requirement sets', 'conformance-eras.json', summaries);
});

describe('conformance requirement sets: the baselines', () => {
  it('knows which scenarios each set scores and which it marks pending', async () => {
    for (const set of REQUIREMENT_SETS) {
      const scored = await scoring(set);
      const pending = [...scored].filter(([, s]) => s === 'pending').map(([name]) => name);
      expect(pending.length, set).toBeGreaterThan(0);
      // Every scenario the set names was run, pending ones included.
      expect([...cell(set, '2026', 'direct').keys()].sort(), set).toEqual([...scored.keys()].sort());
    }
  });

  it('both fixtures pass the whole 2025-11-25 set directly', () => {
    for (const fixture of ['2025', '2026'] as const) {
      const direct = cell('2025-11-25', fixture, 'direct');
      expect(failing(direct), failures(direct, failing(direct))).toEqual([]);
    }
  });

  it('the 2026-era fixture passes the 2026-07-28 set directly but for the tasks extension', () => {
    const direct = cell('2026-07-28', '2026', 'direct');
    expect(failing(direct), failures(direct, failing(direct))).toEqual(FIXTURE_2026_CANNOT);
  });

  it('the 2025-era fixture fails the 2026-07-28 set directly (it needs the bridge)', () => {
    expect(passing(cell('2026-07-28', '2025', 'direct'))).toEqual(FIXTURE_2025_PASSES_AT_2026);
  });
});

describe('conformance requirement sets through Moat', () => {
  it('2025-11-25: 100% of what passes directly, in front of either fixture, over HTTP and stdio', () => {
    for (const fixture of ['2025', '2026'] as const) {
      const direct = passing(cell('2025-11-25', fixture, 'direct'));
      for (const via of ['moat-http', 'moat-stdio'] as const) {
        const proxied = cell('2025-11-25', fixture, via);
        const missing = direct.filter((s) => !proxied.get(s)?.passed);
        expect(missing, `${cellName(fixture, via)}\n${failures(proxied, missing)}`).toEqual([]);
        expect(passing(proxied), cellName(fixture, via)).toEqual(direct);
      }
    }
    console.log(
      `2025-11-25 through Moat: ${passing(cell('2025-11-25', '2025', 'direct')).length} scenarios pass`,
    );
  });

  it('2026-07-28 over HTTP and stdio in front of the 2026-era fixture: everything that passes directly', () => {
    const target = passing(cell('2026-07-28', '2026', 'direct'));
    for (const via of ['moat-http', 'moat-stdio'] as const) {
      const proxied = cell('2026-07-28', '2026', via);
      const missing = target.filter((s) => !proxied.get(s)?.passed);
      // Over stdio the fixture serves both eras: 2025 sessions on the process Moat initialized,
      // 2026-07-28 requests on a second process (src/proxy/stdio/era-process.ts).
      expect(missing, `${cellName('2026', via)}\n${failures(proxied, missing)}`).toEqual([]);
    }
  });

  it('2026-07-28 in front of a 2025-11-25 server, over HTTP and stdio: everything that passes against the 2026-era fixture', () => {
    const target = passing(cell('2026-07-28', '2026', 'direct'));
    for (const proxied of [
      cell('2026-07-28', '2025', 'moat-http'),
      cell('2026-07-28', '2025', 'moat-stdio'),
    ]) {
      const missing = target.filter((s) => !proxied.get(s)?.passed);
      expect(missing, failures(proxied, missing)).toEqual([]);
    }
  });
});

describe('conformance through Moat attached to a stdio server in a Podman container', () => {
  let runtime: ContainerRuntime;
  let containerId: string | undefined;

  beforeAll(async () => {
    runtime = await testRuntime();
  });
  afterAll(async () => {
    if (containerId) await runtime.removeContainer(containerId);
  });

  it(
    '2025-11-25: 100% of what passes directly against the 2025-era fixture',
    async () => {
      const container = await startConformanceContainer(runtime);
      containerId = container.id;
      const moat = await moatInFrontOf({ kind: 'stdio', connect: () => container.connect() });
      try {
        const proxied = await runSuite(`${moat.proxy.url}/mcp`, '2025-11-25', () => true);
        await record('2025-11-25', 'moat-stdio 2025-era fixture in a Podman container', proxied);
        expect(passing(proxied)).toEqual(passing(cell('2025-11-25', '2025', 'direct')));
      } finally {
        await moat.stop();
      }
    },
    SUITE_TIMEOUT,
  );
});
