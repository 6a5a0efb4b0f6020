/**
 * `moat run -f`: blocks with the workload running, and on Ctrl-C (SIGINT) stops the proxy and
 * removes the container and all state; `--from-config -f` keeps the state.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import { callTool, moat, testMoatHome, spawnMoat, urlPrintedBy, workload } from '../../support/moat-cli.js';
import { testRuntime, uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });
}

describe('foreground runs', { timeout: 300_000 }, () => {
  it('serve until Ctrl-C, then remove the container and the state', async () => {
    const name = uniqueName('fg');
    const child = spawnMoat(home, ['run', '-f', '--transport', 'stdio', '--name', name, image]);
    const exited = exitOf(child);
    const url = await urlPrintedBy(child);
    expect((await workload(home, name))?.status).toBe('running');
    expect(await callTool(url, 'echo', { text: 'foreground' })).toBe('foreground');

    process.kill(child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(await (await testRuntime()).inspectContainer(name)).toBeUndefined();
    expect(await workload(home, name)).toBeUndefined();
  });

  it('keep the state of a --from-config run after Ctrl-C', async () => {
    const name = uniqueName('fgcfg');
    const file = join(home, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        schema_version: 'v0.1.0',
        image,
        name,
        transport: 'stdio',
        host: '127.0.0.1',
        port: 0,
      }),
    );
    const child = spawnMoat(home, ['run', '--from-config', file, '-f']);
    const exited = exitOf(child);
    const url = await urlPrintedBy(child);
    expect(await callTool(url, 'echo', { text: 'cfg' })).toBe('cfg');
    process.kill(child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    expect((await workload(home, name))?.status).toBe('stopped');
    await moat(home, ['rm', name]);
  });
});
