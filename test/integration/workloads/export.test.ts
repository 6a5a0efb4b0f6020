/**
 * An exported workload runs again: a port moat picked is not pinned in the file, and the run-time
 * flags (--name, --proxy-port, --host, --group) combine with --from-config.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import { callTool, moatOk, printedUrl, testMoatHome, workload } from '../../support/moat-cli.js';
import { freePort } from '../../support/ports.js';
import { uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

describe('export and run again', { timeout: 300_000 }, () => {
  it('an auto-chosen port is not pinned; the export runs next to a workload holding that port', async () => {
    const name = uniqueName('exp');
    const url = printedUrl(await moatOk(home, ['run', '--transport', 'stdio', '--name', name, image]));
    const port = Number(new URL(url).port);
    const file = join(home, `${name}.json`);
    await moatOk(home, ['export', name, file]);
    const exported = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(exported.port).toBe(0);
    expect(exported).not.toHaveProperty('auto_ports');
    await moatOk(home, ['rm', name]);

    // Another workload now holds the port the first one had.
    const holder = uniqueName('holder');
    await moatOk(home, [
      'run',
      '--transport',
      'stdio',
      '--name',
      holder,
      '--proxy-port',
      String(port),
      image,
    ]);
    const again = printedUrl(await moatOk(home, ['run', '--from-config', file]));
    expect(Number(new URL(again).port)).not.toBe(port);
    expect(await callTool(again, 'echo', { text: 'from the export' })).toBe('from the export');
    await moatOk(home, ['rm', name, holder]);
  });

  it('--name, --proxy-port, --host and --group go with --from-config', async () => {
    const name = uniqueName('expsrc');
    await moatOk(home, ['run', '--transport', 'stdio', '--name', name, image]);
    const file = join(home, `${name}.json`);
    await moatOk(home, ['export', name, file]);
    await moatOk(home, ['group', 'create', 'exported']);
    const other = uniqueName('expcopy');
    const port = await freePort();
    const url = printedUrl(
      await moatOk(home, [
        'run',
        '--from-config',
        file,
        '--name',
        other,
        '--proxy-port',
        String(port),
        '--host',
        '127.0.0.1',
        '--group',
        'exported',
      ]),
    );
    expect(url).toContain(`:${port}/`);
    expect(await workload(home, other)).toMatchObject({ status: 'running', group: 'exported', port });
    expect(await callTool(url, 'echo', { text: 'copy' })).toBe('copy');
    await moatOk(home, ['rm', name, other]);
  });
});
