import { describe, expect, it } from 'vitest';
import { corpus } from './guardrails-corpus.js';
import { evaluate } from './guardrails-eval.js';

describe('guardrail detectors on the labelled corpus', () => {
  const { samples, scores } = evaluate();

  it('has at least 300 samples, hard negatives included', () => {
    expect(samples).toBeGreaterThanOrEqual(300);
    expect(corpus().filter((s) => s.expect.length === 0).length).toBeGreaterThanOrEqual(100);
  });

  // The published figures (docs/security.md): precision 1.0 everywhere, recall at least 0.93 where
  // the corpus keeps the detector's known misses.
  it.each(scores.map((s) => [s.detector, s] as const))('%s keeps its precision and recall', (_id, score) => {
    expect(score.precision).toBeGreaterThanOrEqual(0.95);
    expect(score.recall).toBeGreaterThanOrEqual(0.93);
  });
});
