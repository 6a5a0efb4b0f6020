/**
 * `npm run fuzz`: every fuzz target (bench/fuzz-targets.ts) until the total reaches the number
 * of executions asked for (default 1 000 000), each target bounded in time. Prints executions per
 * target and every counterexample; exits 1 when any property failed.
 *
 *   npm run fuzz -- [--runs 1000000] [--seconds-per-target 300] [--seed N] [--target TEXT]
 *
 * `--target` keeps only the targets whose name contains TEXT (e.g. `--target "hostile server"`
 * gives the response side all the runs; run it in several processes with different seeds to use
 * every core).
 */
import fc from 'fast-check';
import { parseArgs } from 'node:util';
import { FUZZ_TARGETS } from './fuzz-targets.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000000' },
    'seconds-per-target': { type: 'string', default: '300' },
    seed: { type: 'string' },
    target: { type: 'string' },
  },
});
const targets = FUZZ_TARGETS.filter((t) => values.target === undefined || t.name.includes(values.target));
if (targets.length === 0) {
  console.error(`--target ${JSON.stringify(values.target)}: no fuzz target's name contains it`);
  process.exit(2);
}
const totalRuns = Number(values.runs);
const perTarget = Math.ceil(totalRuns / targets.length);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const limitMs = Number(values['seconds-per-target']) * 1000;

let executions = 0;
let failures = 0;
const started = Date.now();
console.log(`fuzz: ${targets.length} targets, ${perTarget} runs each, seed ${seed}`);
for (const target of targets) {
  const t0 = Date.now();
  const details = await fc.check(target.property(), {
    numRuns: perTarget,
    seed,
    interruptAfterTimeLimit: limitMs,
    markInterruptAsFailure: false,
  });
  await target.close?.();
  executions += details.numRuns;
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (details.failed) {
    failures += 1;
    console.log(`FAIL ${target.name}: ${details.numRuns} runs, ${seconds} s`);
    console.log(`  counterexample: ${fc.stringify(details.counterexample)}`);
    if (details.errorInstance instanceof Error) console.log(`  error: ${details.errorInstance.message}`);
  } else {
    const interrupted = details.interrupted ? ' (time limit reached)' : '';
    console.log(`ok   ${target.name}: ${details.numRuns} runs, ${seconds} s${interrupted}`);
  }
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`fuzz: ${executions} executions in ${seconds} s, ${failures} failing target(s)`);
process.exitCode = failures > 0 ? 1 : 0;
