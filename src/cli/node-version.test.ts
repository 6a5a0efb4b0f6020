import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from './node-version.js';

describe('nodeVersionProblem', () => {
  it.each(['22.0.0', '22.19.1', '24.21.0', '30.1.2'])('accepts Node %s', (version) => {
    expect(nodeVersionProblem(version)).toBeUndefined();
  });

  it.each(['20.20.2', '21.7.3', '18.0.0'])('refuses Node %s and says how to get 22+', (version) => {
    expect(nodeVersionProblem(version)).toMatch(
      new RegExp(
        `needs Node.js 22 or newer, and this is Node.js ${version.replace(/\./g, '\\.')}; install Node.js 22\\+`,
      ),
    );
  });
});
