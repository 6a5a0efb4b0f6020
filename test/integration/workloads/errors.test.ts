/**
 * Bad input to the lifecycle commands: a clear message naming what was wrong, the documented
 * exit code (2: usage, 1: runtime), and nothing lost. Also groups.
 */
import { createServer, type Server } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import {
  callTool,
  listWorkloads,
  moat,
  testMoatHome,
  moatOk,
  printedUrl,
  workload,
} from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

describe('bad input', { timeout: 300_000 }, () => {
  it('an unknown image fails the run on the terminal (exit 1, image named), saves nothing, and the name stays free', async () => {
    const name = uniqueName('noimage');
    const missing = `localhost/moat-test-missing:${name}`;
    const result = await moat(home, ['run', '--transport', 'stdio', '--name', name, missing]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(missing);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await workload(home, name)).toBeUndefined();

    const url = printedUrl(await moatOk(home, ['run', '--transport', 'stdio', '--name', name, image]));
    expect(await callTool(url, 'echo', { text: 'reused' })).toBe('reused');
    await moatOk(home, ['rm', name]);
  });

  it('a taken name is a usage error, and a second supervisor refuses; the running workload is left alone', async () => {
    const name = uniqueName('taken');
    const first = await moat(home, [
      'run',
      '--transport',
      'stdio',
      '--host',
      '0.0.0.0',
      '--name',
      name,
      image,
    ]);
    expect(first.code).toBe(0);
    const url = printedUrl(first.stdout);
    // The warnings a person must see: on the terminal, once each, after everything was checked.
    const warnings = first.stderr.split('\n').filter((line) => line.startsWith('Warning: '));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('UNAUTHENTICATED proxy on non-loopback address 0.0.0.0');
    const again = await moat(home, [
      'run',
      '--transport',
      'stdio',
      '--name',
      name,
      'localhost/moat-test-missing:x',
    ]);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      `Error: workload "${name}" already exists; choose another --name, or remove it first with ` +
        `"moat rm ${name}" (or restart it with "moat restart ${name}")\n`,
    ); // the name is checked before the (missing) image, and no warning comes before the error
    // A second supervisor for a supervised workload refuses instead of replacing its container.
    const second = await moat(home, ['supervise', name]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('another process supervises it');
    expect(await callTool(url, 'echo', { text: 'still here' })).toBe('still here');
    expect((await workload(home, name))?.status).toBe('running');
    await moatOk(home, ['rm', name]);
  });

  it('a stdio server run without --transport fails saying it looks like one, and suggests --transport stdio', async () => {
    const name = uniqueName('nostdio');
    const result = await moat(home, ['run', '--name', name, image]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('it looks like a stdio server');
    expect(result.stderr).toContain('run it with --transport stdio');
    expect((await workload(home, name))?.status).toBe('error');
    await moatOk(home, ['rm', name]);
  });

  it('a permission profile file that is missing or invalid is a usage error naming the file', async () => {
    const missing = join(home, 'no-such-profile.json');
    const result = await moat(home, ['run', '--transport', 'stdio', '--permission-profile', missing, image]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(missing);
    const broken = join(home, 'broken-profile.json');
    writeFileSync(broken, '{"network": "everything"}');
    const invalid = await moat(home, ['run', '--transport', 'stdio', '--permission-profile', broken, image]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain(broken);
    expect(await listWorkloads(home)).toEqual([]);
  });

  it('a busy --proxy-port is refused before anything starts', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const name = uniqueName('busy');
      const result = await moat(home, [
        'run',
        '--transport',
        'stdio',
        '--name',
        name,
        '--proxy-port',
        String(port),
        image,
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`requested proxy port ${port}`);
      expect(await workload(home, name)).toBeUndefined();
    } finally {
      blocker.close();
    }
  });

  it.each([['stop'], ['start'], ['rm'], ['logs'], ['export']])(
    '%s of an unknown workload names it (exit 2)',
    async (command) => {
      const args =
        command === 'export'
          ? [command, 'no-such-workload', join(home, 'x.json')]
          : [command, 'no-such-workload'];
      const result = await moat(home, args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('workload "no-such-workload" does not exist');
    },
  );

  it('a workload with unreadable state is neither overwritten nor stuck: rm removes it', async () => {
    const name = uniqueName('corrupt');
    mkdirSync(join(home, 'data/statuses'), { recursive: true });
    writeFileSync(join(home, 'data/statuses', `${name}.json`), '{not json');
    expect((await workload(home, name))?.status).toBe('unknown');
    const run = await moat(home, ['run', '--transport', 'stdio', '--name', name, image]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`workload "${name}" already exists`);
    expect(await moatOk(home, ['rm', name])).toContain(`Removed ${name}`);
    expect(await workload(home, name)).toBeUndefined();
  });

  it('stop without names or --all is a usage error', async () => {
    const result = await moat(home, ['stop']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--all');
  });
});

describe('groups', { timeout: 300_000 }, () => {
  it('must exist before use (except default), filter list and stop, and are removed only when empty', async () => {
    const group = uniqueName('team');
    const name = uniqueName('grouped');
    const unknown = await moat(home, [
      'run',
      '--transport',
      'stdio',
      '--group',
      group,
      '--name',
      name,
      image,
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`group "${group}" does not exist`);
    expect(unknown.stderr).toContain(`moat group create ${group}`);

    await moatOk(home, ['group', 'create', group]);
    expect(await moatOk(home, ['group', 'list'])).toContain(group);
    await moatOk(home, ['run', '--transport', 'stdio', '--group', group, '--name', name, image]);
    expect((await listWorkloads(home, '--group', group)).map((w) => w.name)).toEqual([name]);
    expect((await listWorkloads(home, '--group', 'default')).map((w) => w.name)).not.toContain(name);

    const busy = await moat(home, ['group', 'rm', group]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(name);

    await moatOk(home, ['stop', '--group', group]);
    expect((await workload(home, name))?.status).toBe('stopped');
    await moatOk(home, ['rm', '--group', group]);
    await moatOk(home, ['group', 'rm', group]);
    expect(await moatOk(home, ['group', 'list'])).not.toContain(group);
  });
});
