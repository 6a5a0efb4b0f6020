/**
 * The official MCP conformance suite against servers of every era mode the SDKs offer, directly
 * and through Moat over HTTP and over stdio: no scenario may pass directly and fail through Moat,
 * in any cell (issue 30: one era decision, dual-era servers passed through unharmed).
 *   - the dual-era fixture (test/fixtures/conformance-dual/): v2 SDK, `server/discover` naming only
 *     2026-07-28, push-style input tools on 2025 sessions, JSON lines to 2026 clients over HTTP;
 *   - the v2 SDK 2026-07-28 only (`legacy: 'reject'`, over HTTP and stdio);
 *   - the v2 SDK serving both eras with 2026-style tools, and the v1 SDK (2025-11-25): their
 *     requirement-set cells are in eras.test.ts; here the older suite.
 * Over stdio a dual-era server is served both eras natively: 2025 sessions on the process Moat
 * initialized, 2026-07-28 requests on a second process (src/proxy/stdio/era-process.ts).
 * Suites: 0.2.0-alpha.12 with both requirement sets, and 0.1.16 `--suite all` (cached per machine
 * by scripts/conformance-suite.sh). "Directly" is the server over HTTP (the suite speaks HTTP);
 * the stdio cells run the same server as a stdio child behind Moat. The counts per cell are
 * printed and written to .test-state/conformance-dual-era.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import {
  FIXTURE_2026_MAIN,
  FIXTURE_DUAL_MAIN,
  FIXTURE_MAIN,
  httpFixture,
  type HttpFixture,
} from '../../fixtures/conformance/spawn.js';
import {
  failures,
  olderConformanceCli,
  passing,
  runSuite,
  type Requirements,
  type ScenarioResult,
} from './suite.js';

type Suite = '0.2.0-alpha.12 2025-11-25' | '0.2.0-alpha.12 2026-07-28' | '0.1.16 all';
const NEW_SETS: Suite[] = ['0.2.0-alpha.12 2025-11-25', '0.2.0-alpha.12 2026-07-28'];
const ALL_SUITES: Suite[] = [...NEW_SETS, '0.1.16 all'];

interface ServerUnderTest {
  name: string;
  main: string;
  httpMode: string;
  stdioMode: string;
  suites: Suite[];
  /** No 2025 sessions: directly, the 2025-era suites (2025-11-25 set, 0.1.16) pass nothing. */
  statelessOnly?: boolean;
}

const SERVERS: ServerUnderTest[] = [
  {
    name: 'dual-era fixture (v2 SDK)',
    main: FIXTURE_DUAL_MAIN,
    httpMode: 'http',
    stdioMode: 'stdio',
    suites: ALL_SUITES,
  },
  {
    name: 'v2 SDK, 2026-07-28 only',
    main: FIXTURE_2026_MAIN,
    httpMode: 'http-modern-only',
    stdioMode: 'stdio-modern-only',
    suites: ALL_SUITES,
    statelessOnly: true,
  },
  {
    name: 'v2 SDK, both eras',
    main: FIXTURE_2026_MAIN,
    httpMode: 'http',
    stdioMode: 'stdio',
    suites: ['0.1.16 all'],
  },
  {
    name: 'v1 SDK, 2025-11-25',
    main: FIXTURE_MAIN,
    httpMode: 'http',
    stdioMode: 'stdio',
    suites: ['0.1.16 all'],
  },
];

type Via = 'direct' | 'moat-http' | 'moat-stdio';
const TIMEOUT = 1_800_000;

const results = new Map<string, Map<string, ScenarioResult>>();
const key = (server: string, suite: Suite, via: Via) => `${server} | ${suite} | ${via}`;
const stops: Array<() => Promise<void>> = [];

function run(url: string, suite: Suite, retry: (scenario: string) => boolean) {
  if (suite === '0.1.16 all') return runSuite(url, undefined, retry, olderConformanceCli());
  return runSuite(url, suite.split(' ')[1] as Requirements, retry);
}

/** One server: directly first (the baseline), then through Moat over HTTP and stdio at once. */
async function runServer(server: ServerUnderTest): Promise<void> {
  const fixture: HttpFixture = await httpFixture(server.main, server.httpMode);
  stops.push(() => fixture.stop());
  for (const suite of server.suites) {
    results.set(key(server.name, suite, 'direct'), await run(fixture.url, suite, () => false));
  }
  const overHttp: MoatUnderTest = await moatInFrontOf({
    kind: 'http',
    url: fixture.url,
    transport: 'streamable-http',
    remote: false,
  });
  const overStdio: MoatUnderTest = await moatInFrontOf(
    'stdio',
    {},
    { fixtureMain: server.main, fixtureMode: server.stdioMode },
  );
  stops.push(
    () => overHttp.stop(),
    () => overStdio.stop(),
  );
  await Promise.all(
    (
      [
        ['moat-http', overHttp],
        ['moat-stdio', overStdio],
      ] as const
    ).map(async ([via, moat]) => {
      for (const suite of server.suites) {
        const direct = new Set(passing(results.get(key(server.name, suite, 'direct'))!));
        // A scenario that passed directly is re-run once when it fails here (timing-bound checks).
        const proxied = await run(`${moat.proxy.url}/mcp`, suite, (s) => direct.has(s));
        results.set(key(server.name, suite, via), proxied);
      }
    }),
  );
}

beforeAll(async () => {
  await Promise.all(SERVERS.map(runServer));
}, TIMEOUT);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
  const rows = [...results].map(([name, run]) => ({
    cell: name,
    passed: `${passing(run).length}/${run.size}`,
  }));
  console.log('conformance, dual-era and SDK servers (scenarios passed/run):');
  console.table(rows);
  mkdirSync('.test-state', { recursive: true });
  writeFileSync(
    '.test-state/conformance-dual-era.json',
    `${JSON.stringify(Object.fromEntries(rows.map((r) => [r.cell, r.passed])), null, 2)}\n`,
  );
});

describe('conformance: nothing passes directly and fails through Moat', () => {
  it('every suite ran against every server directly; a 2026-only server passes no 2025-era suite', () => {
    for (const server of SERVERS) {
      for (const suite of server.suites) {
        const direct = results.get(key(server.name, suite, 'direct'))!;
        expect(direct.size, `${server.name} ${suite}`).toBeGreaterThan(0);
        const sessionSuite = suite !== '0.2.0-alpha.12 2026-07-28';
        if (server.statelessOnly && sessionSuite) expect(passing(direct), server.name).toEqual([]);
        else expect(passing(direct).length, `${server.name} ${suite}`).toBeGreaterThan(0);
      }
    }
  });

  it('the dual-era fixture passes the whole 2025-11-25 set directly (its 2025 sessions work)', () => {
    const direct = results.get(key('dual-era fixture (v2 SDK)', '0.2.0-alpha.12 2025-11-25', 'direct'))!;
    const failing = [...direct.values()].filter((r) => !r.passed).map((r) => r.scenario);
    expect(failing, failures(direct, failing)).toEqual([]);
  });

  for (const server of SERVERS) {
    for (const via of ['moat-http', 'moat-stdio'] as const) {
      it(`${server.name} through Moat over ${via === 'moat-http' ? 'HTTP' : 'stdio'}`, () => {
        for (const suite of server.suites) {
          const direct = passing(results.get(key(server.name, suite, 'direct'))!);
          const proxied = results.get(key(server.name, suite, via))!;
          const lost = direct.filter((s) => !proxied.get(s)?.passed);
          expect(lost, `${suite}\n${failures(proxied, lost)}`).toEqual([]);
        }
      });
    }
  }
});
