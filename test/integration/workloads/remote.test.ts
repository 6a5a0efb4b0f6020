/**
 * A remote-URL workload (no container): a real MCP SDK server on the host plays the remote; the
 * same commands run, list, stop, start and remove it.
 */
import { describe, expect, it } from 'vitest';
import { testHostServer } from '../../support/host-server.js';
import { callTool, moat, testMoatHome, moatOk, printedUrl, workload } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

const remote = testHostServer();
const home = testMoatHome();

describe('remote URL workload', { timeout: 300_000 }, () => {
  it('is proxied and managed by the same commands, with proxy logs only', async () => {
    const name = uniqueName('remote');
    const url = printedUrl(await moatOk(home, ['run', remote.url, '--name', name]));
    expect(await workload(home, name)).toMatchObject({
      status: 'running',
      remote: true,
      transport: 'streamable-http',
    });
    expect(await callTool(url, 'echo', { text: 'via remote' })).toBe('via remote');

    const logs = await moat(home, ['logs', name]);
    expect(logs.code).toBe(2);
    expect(logs.stderr).toContain('remote server with no container; use --proxy');
    expect(await moatOk(home, ['logs', '--proxy', name])).toContain(remote.url);

    await moatOk(home, ['stop', name]);
    expect((await workload(home, name))?.status).toBe('stopped');
    await expect(callTool(url, 'echo', { text: 'x' })).rejects.toThrow();
    expect(printedUrl(await moatOk(home, ['start', name]))).toBe(url);
    expect(await callTool(url, 'echo', { text: 'again' })).toBe('again');
    await moatOk(home, ['rm', name]);
    expect(await workload(home, name)).toBeUndefined();
  });
});
