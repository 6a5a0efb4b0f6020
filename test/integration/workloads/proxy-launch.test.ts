/**
 * The supervisor `moat run` starts, detached or in the foreground (-f), gets the launch settings
 * of src/util/proxy-launch.ts (a small V8 young generation, two malloc arenas), read from the real
 * process in /proc, and a user's own MALLOC_ARENA_MAX wins. A foreground run becomes the
 * supervisor in place: same PID, its output on the same stdout, Ctrl-C and SIGTERM end it with
 * exit code 0. Uses a remote workload for a loopback MCP server (no container needed).
 */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startV2StreamableBackend } from '../../support/mcp-http-backends.js';
import {
  callTool,
  eventually,
  moatOk,
  printedUrl,
  spawnMoat,
  statusFile,
  testMoatHome,
  workload,
} from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

const home = testMoatHome();

/** A process's argv and environment, from /proc. */
async function processOf(pid: number): Promise<{ argv: string[]; env: string[] }> {
  expect(pid).toBeGreaterThan(0);
  const split = (text: string) => text.split('\0').filter((part) => part !== '');
  return {
    argv: split(await readFile(`/proc/${pid}/cmdline`, 'utf8')),
    env: split(await readFile(`/proc/${pid}/environ`, 'utf8')),
  };
}

describe('the supervisor launch settings', { timeout: 120_000 }, () => {
  let backend: Awaited<ReturnType<typeof startV2StreamableBackend>>;
  beforeAll(async () => {
    backend = await startV2StreamableBackend();
  });
  afterAll(() => backend.close());

  it('starts the supervisor with a 2 MB semi-space and MALLOC_ARENA_MAX=2, and it serves', async () => {
    const name = uniqueName('launch');
    const url = printedUrl(await moatOk(home, ['run', '--name', name, backend.url]));
    const { argv, env } = await processOf(statusFile(home, name).process_id);
    expect(argv.slice(1, 2)).toEqual(['--max-semi-space-size=2']);
    expect(argv.slice(-2)).toEqual(['supervise', name]);
    expect(env).toContain('MALLOC_ARENA_MAX=2');
    expect(await callTool(url, 'echo', { text: 'launched' })).toContain('launched');
    await moatOk(home, ['rm', name]);
  });

  it("keeps the user's own MALLOC_ARENA_MAX", async () => {
    const name = uniqueName('launch-env');
    await moatOk(home, ['run', '--name', name, backend.url], { MALLOC_ARENA_MAX: '4' });
    const { env } = await processOf(statusFile(home, name).process_id);
    expect(env).toContain('MALLOC_ARENA_MAX=4');
    expect(env).not.toContain('MALLOC_ARENA_MAX=2');
    await moatOk(home, ['rm', name]);
  });

  describe('moat run -f', () => {
    /** The foreground run's stdout so far, and its exit. */
    function watch(child: ChildProcess) {
      const out = { text: '' };
      child.stdout?.on('data', (chunk: Buffer) => (out.text += String(chunk)));
      child.stderr?.on('data', (chunk: Buffer) => (out.text += String(chunk)));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      return { out, exited };
    }

    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      it(`becomes the supervisor with the launch settings, in place; ${signal} ends it with 0 and removes it`, async () => {
        const name = uniqueName('launch-fg');
        const child = spawnMoat(home, ['run', '-f', '--name', name, backend.url]);
        const { out, exited } = watch(child);
        const url = await eventually('the URL of the foreground run', () =>
          Promise.resolve(/URL: (\S+)/.exec(out.text)?.[1]),
        );
        expect(out.text).toContain(`Workload "${name}" is running; press Ctrl-C to stop.`);
        // The process moat run started is the supervisor now: same PID, new command line.
        expect(statusFile(home, name).process_id).toBe(child.pid);
        const { argv, env } = await processOf(child.pid!);
        expect(argv.slice(1, 2)).toEqual(['--max-semi-space-size=2']);
        expect(argv.slice(-4)).toEqual(['supervise', '--foreground', '--remove-after', name]);
        expect(env).toContain('MALLOC_ARENA_MAX=2');
        expect(await callTool(url, 'echo', { text: 'in the foreground' })).toContain('in the foreground');

        child.kill(signal);
        expect(await exited).toEqual({ code: 0, signal: null });
        expect(await workload(home, name)).toBeUndefined();
      });
    }
  });
});
