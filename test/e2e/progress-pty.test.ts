/**
 * `moat run` on a real pseudo-terminal (util-linux `script`) whose reported width is odd: the
 * progress display must finish and its output must stay small whatever the terminal says. A
 * terminal reporting 0 columns once made the spinner loop forever writing cursor codes.
 */
import { describe, expect, it } from 'vitest';
import { testServerImage } from '../support/images.js';
import { moat, testMoatHome } from '../support/moat-cli.js';
import { uniqueName } from '../support/podman.js';
import { moatOnPty } from '../support/pty.js';

const home = testMoatHome();
const OUTPUT_LIMIT = 256 * 1024;

describe('progress on a real pseudo-terminal', { timeout: 180_000 }, () => {
  it.each([0, 3, 60])(
    'finishes with bounded output when the terminal reports %i columns',
    async (columns) => {
      const image = await testServerImage('stdio-server');
      const name = uniqueName(`pty${columns}`);
      const run = await moatOnPty(['run', '--transport', 'stdio', '--name', name, image], {
        home,
        columns,
        byteLimit: 4 * OUTPUT_LIMIT,
      });
      try {
        expect(run.timedOut).toBe(false);
        expect(run.bytes).toBeLessThan(OUTPUT_LIMIT);
        expect(run.code).toBe(0);
        expect(run.output).toContain(`Workload "${name}" is running.`);
        expect(run.output).toContain(image); // the progress display said what it checked
      } finally {
        await moat(home, ['rm', name]);
      }
    },
  );
});
