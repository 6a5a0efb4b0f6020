/**
 * `moat run` on a real pseudo-terminal (util-linux `script`) whose reported width is odd: the
 * progress display must finish and its output must stay small whatever the terminal says. A
 * terminal reporting 0 columns once made the spinner loop forever writing cursor codes.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { testServerImage } from '../support/images.js';
import { MOAT_MAIN, moat, moatEnv, testMoatHome } from '../support/moat-cli.js';
import { uniqueName } from '../support/podman.js';

const home = testMoatHome();
const OUTPUT_LIMIT = 256 * 1024;
const RUN_LIMIT_MS = 90_000;

interface PtyRun {
  code: number | null;
  output: string;
  bytes: number;
  timedOut: boolean;
}

/** Runs `moat <args>` inside `script` with the terminal set to `columns`; bounded in time and bytes. */
function moatOnPty(columns: number, args: string[]): Promise<PtyRun> {
  const quoted = [process.execPath, MOAT_MAIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`);
  const env: NodeJS.ProcessEnv = { ...moatEnv(home), TERM: 'xterm-256color' };
  delete env.CI; // CI gets plain lines on purpose; this test is about a person's terminal
  const child = spawn(
    'script',
    ['-qfec', `stty cols ${columns} rows 24; exec ${quoted.join(' ')}`, '/dev/null'],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let bytes = 0;
  let output = '';
  let timedOut = false;
  const stop = () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, RUN_LIMIT_MS);
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (output.length < OUTPUT_LIMIT) output += chunk.toString();
    if (bytes > 4 * OUTPUT_LIMIT) stop();
  });
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, bytes, timedOut });
    });
  });
}

describe('progress on a real pseudo-terminal', { timeout: 180_000 }, () => {
  it.each([0, 3, 60])(
    'finishes with bounded output when the terminal reports %i columns',
    async (columns) => {
      const image = await testServerImage('stdio-server');
      const name = uniqueName(`pty${columns}`);
      const run = await moatOnPty(columns, ['run', '--transport', 'stdio', '--name', name, image]);
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
