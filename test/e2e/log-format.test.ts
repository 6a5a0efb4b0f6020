/**
 * Logs as a person reads them: readable lines (time, level, message, fields) on a terminal, in
 * `moat logs --proxy` and in a foreground run; the stored JSON with `--format json` and on a pipe.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../support/images.js';
import { moat, moatOk, printedUrl, testMoatHome } from '../support/moat-cli.js';
import { uniqueName } from '../support/podman.js';
import { moatOnPty } from '../support/pty.js';

const home = testMoatHome();
const READABLE_RUNNING =
  /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z INFO {2}workload running workload=\S+ url=http/m;
let image: string;

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

describe('log format', { timeout: 180_000 }, () => {
  it('moat logs --proxy: JSON on a pipe and with --format json, readable with --format text and on a terminal', async () => {
    const name = uniqueName('logfmt');
    printedUrl(await moatOk(home, ['run', '--transport', 'stdio', '--name', name, image]));
    try {
      const piped = await moatOk(home, ['logs', '--proxy', name]);
      const records = piped
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { msg?: string });
      expect(records.map((r) => r.msg)).toContain('workload running');
      expect(await moatOk(home, ['logs', '--proxy', '--format', 'json', name])).toBe(piped);

      const text = await moatOk(home, ['logs', '--proxy', '--format', 'text', name]);
      expect(text).toMatch(READABLE_RUNNING);
      expect(text).not.toContain('{"level"');

      const onTerminal = await moatOnPty(['logs', '--proxy', name], { home });
      expect(onTerminal.code).toBe(0);
      expect(onTerminal.output).toMatch(/INFO {2}workload running workload=/);
      expect(onTerminal.output).not.toContain('{"level"');
    } finally {
      await moat(home, ['rm', name]);
    }
  });

  it('moat run -f on a terminal prints readable log lines, not JSON', async () => {
    const name = uniqueName('fgfmt');
    let stopping: Promise<unknown> | undefined;
    const run = await moatOnPty(['run', '-f', '--transport', 'stdio', '--name', name, image], {
      home,
      onOutput: (output) => {
        if (!output.includes('workload running')) return false;
        stopping = moat(home, ['stop', name]); // the foreground run ends and removes itself
        return true;
      },
    });
    await stopping;
    expect(run.timedOut).toBe(false);
    expect(run.output).toMatch(/INFO {2}workload running workload=/);
    expect(run.output).not.toContain('{"level"');
  });
});
