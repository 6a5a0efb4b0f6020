/**
 * The supervisor `moat run` starts gets the launch settings of src/workloads/supervisor-launch.ts
 * (a small V8 young generation, two malloc arenas), and a user's own MALLOC_ARENA_MAX wins. Uses
 * a remote workload for a loopback MCP server (no container needed).
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startV2StreamableBackend } from '../../support/mcp-http-backends.js';
import { callTool, moatOk, printedUrl, statusFile, testMoatHome } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

const home = testMoatHome();

/** The supervisor's argv and environment, from /proc. */
async function supervisorProcess(name: string): Promise<{ argv: string[]; env: string[] }> {
  const pid = statusFile(home, name).process_id;
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
    const { argv, env } = await supervisorProcess(name);
    expect(argv.slice(1, 2)).toEqual(['--max-semi-space-size=2']);
    expect(argv.slice(-2)).toEqual(['supervise', name]);
    expect(env).toContain('MALLOC_ARENA_MAX=2');
    expect(await callTool(url, 'echo', { text: 'launched' })).toContain('launched');
    await moatOk(home, ['rm', name]);
  });

  it("keeps the user's own MALLOC_ARENA_MAX", async () => {
    const name = uniqueName('launch-env');
    await moatOk(home, ['run', '--name', name, backend.url], { MALLOC_ARENA_MAX: '4' });
    const { env } = await supervisorProcess(name);
    expect(env).toContain('MALLOC_ARENA_MAX=4');
    expect(env).not.toContain('MALLOC_ARENA_MAX=2');
    await moatOk(home, ['rm', name]);
  });
});
