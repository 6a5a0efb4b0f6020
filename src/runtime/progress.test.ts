import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { imageProgressDisplay } from './progress.js';

function capture(isTTY: boolean): {
  stream: PassThrough & { isTTY?: boolean; columns?: number };
  output: () => string;
} {
  const stream = Object.assign(new PassThrough(), { isTTY, columns: 80 });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, output: () => text };
}

describe('imageProgressDisplay', () => {
  it('writes plain lines when the stream is not a TTY: one Pulling line, then the outcome', () => {
    const { stream, output } = capture(false);
    const display = imageProgressDisplay(stream, {});
    display.onProgress({ phase: 'check', image: 'img:1', message: 'Checking image img:1' });
    display.onProgress({ phase: 'pull', image: 'img:1', message: 'Pulling img:1...' });
    display.onProgress({ phase: 'pull', image: 'img:1', message: 'abc Downloading 1MB/2MB' });
    display.onProgress({ phase: 'done', image: 'img:1', message: 'Pulled img:1' });
    expect(output()).toBe('Pulling img:1...\nPulled img:1\n');
  });

  it('uses a spinner on a TTY (a PassThrough marked isTTY stands in for a terminal) and ends with the outcome', () => {
    const { stream, output } = capture(true);
    const display = imageProgressDisplay(stream, {});
    display.onProgress({ phase: 'check', image: 'img', message: 'Checking image img' });
    display.onProgress({ phase: 'pull', image: 'img', message: 'Pulling img...' });
    display.onProgress({ phase: 'done', image: 'img', message: 'Pulled img' });
    expect(output()).toContain('Pulled img');
    expect(output()).toContain('\r\u001b[K'); // the spinner's line was drawn in place
  });

  it('uses plain lines on a terminal that reports 0 columns (or is too narrow for a spinner)', () => {
    for (const columns of [0, 5]) {
      const { stream, output } = capture(true);
      stream.columns = columns;
      const display = imageProgressDisplay(stream, {});
      display.onProgress({ phase: 'pull', image: 'img', message: 'Pulling img...' });
      display.onProgress({ phase: 'done', image: 'img', message: 'Pulled img' });
      expect(output()).toBe('Pulling img...\nPulled img\n');
    }
  });

  it('cuts the spinner line to the terminal width and keeps multi-line text on one line', () => {
    const { stream, output } = capture(true);
    stream.columns = 30;
    const display = imageProgressDisplay(stream, { NO_COLOR: '1' });
    display.onProgress({ phase: 'pull', image: 'img', message: `step\n${'x'.repeat(100)}` });
    display.fail();
    const drawn = output().split('\r\u001b[K').filter(Boolean);
    expect(drawn[0]).toBe(`⠋ step · ${'x'.repeat(20)}…`);
  });

  it('falls back to plain lines on a TTY in CI', () => {
    const { stream, output } = capture(true);
    const display = imageProgressDisplay(stream, { CI: 'true' });
    display.onProgress({ phase: 'pull', image: 'img', message: 'Pulling img...' });
    display.fail();
    expect(output()).toBe('Pulling img...\n');
  });

  it("prints each build step as a plain line, not the steps' output, then the outcome", () => {
    const { stream, output } = capture(false);
    const display = imageProgressDisplay(stream, {});
    display.onProgress({ phase: 'step', image: 'b:1', message: 'Building b:1 for npx://pkg' });
    display.onProgress({ phase: 'step', image: 'b:1', message: '[1/2] STEP 1/5: FROM base AS builder' });
    display.onProgress({ phase: 'output', image: 'b:1', message: 'added 12 packages' });
    display.onProgress({ phase: 'done', image: 'b:1', message: 'Built b:1 for npx://pkg' });
    expect(output()).toBe(
      'Building b:1 for npx://pkg\n[1/2] STEP 1/5: FROM base AS builder\nBuilt b:1 for npx://pkg\n',
    );
  });

  it('shows the current build step and its latest output line in the spinner on a TTY', () => {
    const { stream, output } = capture(true);
    const display = imageProgressDisplay(stream, {});
    display.onProgress({ phase: 'step', image: 'b', message: 'STEP 3/9: RUN npm install pkg' });
    display.onProgress({ phase: 'output', image: 'b', message: 'added 12 packages' });
    display.onProgress({ phase: 'done', image: 'b', message: 'Built b' });
    expect(output()).toContain('STEP 3/9: RUN npm install pkg');
    expect(output()).toContain('Built b');
  });
});
