/**
 * A server that keeps crashing: the supervisor restarts it with backoff, a bounded number of
 * times, then gives up with status `error` and says why.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildNodeImage } from '../../support/images.js';
import { eventually, moat, testMoatHome, moatOk, workload } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  // A "server" that exits with code 3 as soon as it starts.
  image = await buildNodeImage({ entrypoint: ['/usr/local/bin/node', '-e', 'process.exit(3)'] });
});

describe('restart limit', { timeout: 300_000 }, () => {
  it('gives up after the bounded restarts with status error and the exit code', async () => {
    const name = uniqueName('crashloop');
    await moat(home, ['run', '--transport', 'stdio', '--name', name, image]);
    const failed = await eventually(
      'the supervisor to give up',
      async () => {
        const w = await workload(home, name);
        if (w?.status === 'error') return w;
        // What the workload says now: the timeout's message names the last state seen.
        throw new Error(`status ${String(w?.status)} (${String(w?.status_context)})`);
      },
      240_000,
    );
    expect(failed.status_context).toMatch(/kept exiting \(last exit code -?\d+\)/);
    expect(failed.status_context).toContain('gave up after 5 restarts');
    const history = (
      JSON.parse(readFileSync(join(home, 'data/statuses', `${name}.json`), 'utf8')) as {
        history: Array<{ status: string; context: string }>;
      }
    ).history;
    const attempts = history.filter(
      (h) => h.status === 'restarting' && h.context.includes('exited with code 3'),
    );
    expect(attempts.map((h) => /attempt (\d) of 5/.exec(h.context)?.[1])).toEqual(['1', '2', '3', '4', '5']);
    expect(attempts.map((h) => /in (\d+)s/.exec(h.context)?.[1])).toEqual(['1', '2', '4', '8', '16']);
    // A workload in error may be replaced by a new run of the same name.
    expect(await moatOk(home, ['rm', name])).toContain(`Removed ${name}`);
  });
});
