/**
 * The official MCP conformance suite (0.2.0-alpha.12, both requirement sets) through an aggregate
 * of one backend (issue 32): no scenario may pass against the baseline directly and fail through
 * Moat's proxy in front of an aggregator whose only member is one conformance fixture, as in the
 * product reached through its own Moat proxy. The aggregator speaks both eras (a 2026-07-28
 * request goes to the member in 2026-07-28, as the client wrote it).
 *   - 2025-11-25: each fixture (2025-era v1 SDK, 2026-era v2 SDK) directly, and as the member;
 *   - 2026-07-28: the 2026-era fixture directly (the baseline the 2026-07-28 cells of
 *     eras.test.ts hold Moat to), with each fixture as the member: the 2026-era one reached in its
 *     own era, the 2025-era one through its Moat proxy's bridge.
 * The counts per cell are printed and written to .test-state/conformance-aggregate.json.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moatInFrontOf, moatInFrontOfAggregate } from '../../fixtures/conformance/moat.js';
import {
  FIXTURE_2026_MAIN,
  FIXTURE_MAIN,
  httpFixture,
  type HttpFixture,
} from '../../fixtures/conformance/spawn.js';
import {
  failures,
  passing,
  reportSummaries,
  runSuite,
  scoring,
  summarize,
  type Requirements,
  type ScenarioResult,
  type Summaries,
} from './suite.js';

const SUITE_TIMEOUT = 900_000;

type Fixture = '2025' | '2026';
const MAIN: Record<Fixture, string> = { '2025': FIXTURE_MAIN, '2026': FIXTURE_2026_MAIN };

/** One comparison: the suite at `set` against `direct` directly and through an aggregate of `member`. */
interface Cell {
  set: Requirements;
  direct: Fixture;
  member: Fixture;
}
const CELLS: Cell[] = [
  { set: '2025-11-25', direct: '2025', member: '2025' },
  { set: '2025-11-25', direct: '2026', member: '2026' },
  { set: '2026-07-28', direct: '2026', member: '2025' },
  { set: '2026-07-28', direct: '2026', member: '2026' },
];
const directName = (c: Cell) => `direct ${c.direct}-era fixture`;
const aggregateName = (c: Cell) => `aggregate of the ${c.member}-era fixture`;

const results = new Map<string, Map<string, ScenarioResult>>();
const summaries: Summaries = {};
const stops: Array<() => Promise<void>> = [];

function cell(set: Requirements, name: string): Map<string, ScenarioResult> {
  const found = results.get(`${set} ${name}`);
  if (!found) throw new Error(`no results for ${set} ${name}`);
  return found;
}

async function record(set: Requirements, name: string, run: Map<string, ScenarioResult>): Promise<void> {
  results.set(`${set} ${name}`, run);
  (summaries[set] ??= {})[name] = summarize(run, await scoring(set));
}

/** Each fixture over HTTP, and the aggregate (Moat, aggregator, member's Moat) in front of it. */
async function serve(fixture: Fixture): Promise<{ fixture: HttpFixture; aggregateUrl: string }> {
  const server = await httpFixture(MAIN[fixture]);
  stops.push(() => server.stop());
  const member = await moatInFrontOf({
    kind: 'http',
    url: server.url,
    transport: 'streamable-http',
    remote: false,
  });
  stops.push(() => member.stop());
  // `priority` keeps the member's names as they are (one member, so nothing is shadowed): the
  // suite calls the fixture's tools and prompts by their own names, which `prefix` would change.
  const aggregate = await moatInFrontOfAggregate(`${member.proxy.url}/mcp`, { strategy: 'priority' });
  stops.push(() => aggregate.stop());
  return { fixture: server, aggregateUrl: `${aggregate.proxy.url}/mcp` };
}

/** The baseline first, then the aggregate (a scenario that passed directly is re-run once when it fails there). */
/** Each baseline runs once, whichever cells compare against it. */
const baselines = new Map<string, Promise<Map<string, ScenarioResult>>>();

async function runCell(c: Cell, served: Map<Fixture, { fixture: HttpFixture; aggregateUrl: string }>) {
  const key = `${c.set} ${directName(c)}`;
  let baseline = baselines.get(key);
  if (!baseline) {
    baseline = runSuite(served.get(c.direct)!.fixture.url, c.set).then(async (run) => {
      await record(c.set, directName(c), run);
      return run;
    });
    baselines.set(key, baseline);
  }
  const direct = await baseline;
  const passed = new Set(passing(direct));
  const through = await runSuite(served.get(c.member)!.aggregateUrl, c.set, (s) => passed.has(s));
  await record(c.set, aggregateName(c), through);
}

beforeAll(async () => {
  const served = new Map<Fixture, { fixture: HttpFixture; aggregateUrl: string }>();
  for (const fixture of ['2025', '2026'] as const) served.set(fixture, await serve(fixture));
  await Promise.all(CELLS.map((c) => runCell(c, served)));
}, SUITE_TIMEOUT);

afterAll(async () => {
  // Each aggregate before its member, each member before its fixture.
  for (const stop of stops.reverse()) await stop();
  reportSummaries('conformance through an aggregate of one backend', 'conformance-aggregate.json', summaries);
});

describe('conformance through an aggregate of one backend', () => {
  for (const c of CELLS) {
    it(`${c.set}: nothing that passes against the ${directName(c)} fails through the ${aggregateName(c)}`, () => {
      const direct = passing(cell(c.set, directName(c)));
      expect(direct.length, c.set).toBeGreaterThan(0);
      const through = cell(c.set, aggregateName(c));
      const lost = direct.filter((s) => !through.get(s)?.passed);
      expect(lost, `${c.set}\n${failures(through, lost)}`).toEqual([]);
    });
  }
});
