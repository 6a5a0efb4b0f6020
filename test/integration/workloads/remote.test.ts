/**
 * A remote-URL workload (no container): a real MCP SDK server on the host plays the remote; the
 * same commands run, list, stop, start and remove it.
 */
import { describe, expect, it } from 'vitest';
import { startHostServer, testHostServer } from '../../support/host-server.js';
import {
  callTool,
  eventually,
  moat,
  moatOk,
  printedUrl,
  testMoatHome,
  workload,
} from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';
import { freePort } from '../../support/ports.js';

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

  it('a remote that does not answer fails the run (exit 1, nothing saved); --skip-remote-check starts it unhealthy until it answers', async () => {
    // Both ports chosen here: an auto-chosen proxy port could be the free remote port itself.
    const proxyPort = await freePort();
    let port = await freePort();
    while (port === proxyPort) port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const name = uniqueName('down');
    const refused = await moat(home, ['run', url, '--name', name]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`cannot reach the remote MCP server ${url}: ECONNREFUSED`);
    expect(refused.stderr).toContain('--skip-remote-check');
    expect(refused.stdout).not.toContain('is running');
    expect(await workload(home, name)).toBeUndefined();

    const proxyUrl = printedUrl(
      await moatOk(home, [
        'run',
        url,
        '--name',
        name,
        '--proxy-port',
        String(proxyPort),
        '--skip-remote-check',
      ]),
    );
    const down = await eventually(
      'the workload to show unhealthy',
      async () => {
        const row = await workload(home, name);
        return row?.status === 'unhealthy' ? row : undefined;
      },
      30_000,
    );
    expect(down.status_context).toContain('the remote server does not answer');
    const server = await startHostServer(port);
    try {
      await eventually(
        'the workload to run again once the remote answers',
        async () => ((await workload(home, name))?.status === 'running' ? true : undefined),
        60_000,
      );
      expect(await callTool(proxyUrl, 'echo', { text: 'up again' })).toBe('up again');
    } finally {
      await server.stop();
      await moat(home, ['rm', name]);
    }
  });
});
