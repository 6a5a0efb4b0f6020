/**
 * Precision and recall of each guardrail detector on the labelled corpus
 * (`npm run guardrails:eval`). A sample counts once per detector: found and expected (true
 * positive), found and not expected (false positive), expected and not found (false negative).
 * Every detector is on, as in a guardrail config that names none.
 */
import { DETECTORS } from '../src/guardrails/detectors.js';
import { createMatcher } from '../src/guardrails/matcher.js';
import { corpus, type Sample } from './guardrails-corpus.js';

export interface DetectorScore {
  detector: string;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
}

export interface Evaluation {
  samples: number;
  scores: DetectorScore[];
  /** The samples a detector got wrong, for the report (never real secrets: the corpus is fake). */
  misses: Array<{ sample: Sample; found: string[] }>;
}

export function evaluate(samples: readonly Sample[] = corpus()): Evaluation {
  const matcher = createMatcher(DETECTORS);
  const counts = new Map(DETECTORS.map((d) => [d.id, { tp: 0, fp: 0, fn: 0 }]));
  const misses: Evaluation['misses'] = [];
  for (const sample of samples) {
    const found = [...new Set(matcher.scan(sample.text).map((h) => h.detector))];
    let wrong = false;
    for (const [id, c] of counts) {
      const hit = found.includes(id);
      const expected = sample.expect.includes(id);
      if (hit && expected) c.tp++;
      else if (hit) c.fp++;
      else if (expected) c.fn++;
      if (hit !== expected) wrong = true;
    }
    if (wrong) misses.push({ sample, found });
  }
  const scores = [...counts].map(([detector, c]) => ({
    detector,
    truePositives: c.tp,
    falsePositives: c.fp,
    falseNegatives: c.fn,
    precision: c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp),
    recall: c.tp + c.fn === 0 ? 1 : c.tp / (c.tp + c.fn),
  }));
  return { samples: samples.length, scores, misses };
}

function main(): void {
  const { samples, scores, misses } = evaluate();
  const positives = corpus().filter((s) => s.expect.length > 0).length;
  console.log(
    `guardrails corpus: ${samples} samples (${positives} with findings, ${samples - positives} hard negatives)\n`,
  );
  console.log('| detector | TP | FP | FN | precision | recall |');
  console.log('|---|---|---|---|---|---|');
  for (const s of scores) {
    console.log(
      `| ${s.detector} | ${s.truePositives} | ${s.falsePositives} | ${s.falseNegatives} | ${s.precision.toFixed(3)} | ${s.recall.toFixed(3)} |`,
    );
  }
  for (const { sample, found } of misses) {
    console.log(
      `\nwrong: expected [${sample.expect.join(', ')}], found [${found.join(', ')}]:\n  ${JSON.stringify(sample.text).slice(0, 160)}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
