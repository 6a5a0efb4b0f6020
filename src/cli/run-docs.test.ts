import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderRunFlagsMarkdown } from './run-docs.js';
import { RUN_FLAGS } from './run-flags.js';

describe('docs/cli.md', () => {
  it('is in sync with the flag table (regenerate with `npx tsx src/cli/run-docs.ts`)', () => {
    const doc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    expect(doc).toBe(renderRunFlagsMarkdown());
  });

  it('documents every flag', () => {
    const doc = renderRunFlagsMarkdown();
    for (const row of RUN_FLAGS) expect(doc).toContain(`--${row.long}`);
  });
});
