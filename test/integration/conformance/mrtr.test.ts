/**
 * The conformance suite's multi round-trip scenarios (`input-required-result-*`, required by
 * 2026-07-28) through Moat in front of the 2025-era fixture, which asks for input the 2025 way
 * (server→client requests during the call): every one passes, warnings included, because Moat
 * answers the suite's 2026-07-28 requests with InputRequiredResult rounds and sealed states.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { httpFixture, type HttpFixture } from '../../fixtures/conformance/spawn.js';
import { failures, runConformance } from './suite.js';

const MRTR_SCENARIOS = [
  'basic-elicitation',
  'basic-sampling',
  'basic-list-roots',
  'request-state',
  'multiple-input-requests',
  'multi-round',
  'missing-input-response',
  'non-tool-request',
  'result-type',
  'unsupported-methods',
  'tampered-state',
  'capability-check',
  'ignore-extra-params',
  'validate-input',
].map((name) => `input-required-result-${name}`);

describe('MRTR conformance scenarios through Moat, 2025-era fixture over HTTP', () => {
  let fixture: HttpFixture;
  let moat: MoatUnderTest;
  beforeAll(async () => {
    fixture = await httpFixture();
    moat = await moatInFrontOf({
      kind: 'http',
      url: fixture.url,
      transport: 'streamable-http',
      remote: false,
    });
  });
  afterAll(async () => {
    await moat?.stop();
    await fixture?.stop();
  });

  it.each(MRTR_SCENARIOS)('%s passes', { timeout: 120_000 }, async (scenario) => {
    const results = await runConformance(moat.proxy.endpoint, { scenario, requirements: '2026-07-28' });
    expect(results.get(scenario)?.passed, failures(results, [scenario])).toBe(true);
  });
});
