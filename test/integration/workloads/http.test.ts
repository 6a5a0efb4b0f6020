/**
 * A streamable-HTTP (and a legacy SSE) MCP server in a container, managed by the real `moat` binary on real
 * Podman: run, call through the proxy, restart, and the supervisor restarting a crashed
 * container (killed with `podman kill`) with its status history.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import {
  callTool,
  eventually,
  moat,
  moatOk,
  printedUrl,
  statusFile,
  testMoatHome,
  workload,
} from '../../support/moat-cli.js';
import { podmanCli, uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('http-server');
});

describe('streamable-HTTP workload', { timeout: 300_000 }, () => {
  it('runs, serves MCP, restarts on the same URL and is removed', async () => {
    const name = uniqueName('http');
    const url = printedUrl(await moatOk(home, ['run', '--name', name, image]));
    const row = await workload(home, name);
    expect(row).toMatchObject({
      status: 'running',
      transport: 'streamable-http',
      url,
      group: 'default',
      remote: false,
    });
    expect(await callTool(url, 'echo', { text: 'http' })).toBe('http');
    expect(await callTool(url, 'get_env', { name: 'MCP_TRANSPORT' })).toBe('streamable-http');

    // `start` leaves a running workload alone and says so; `restart` restarts it.
    const pid = statusFile(home, name).process_id;
    expect(await moatOk(home, ['start', name])).toBe(
      `Workload "${name}" is already running at ${url}; "moat restart ${name}" restarts it.\n`,
    );
    expect(statusFile(home, name).process_id).toBe(pid);
    expect(printedUrl(await moatOk(home, ['restart', name]))).toBe(url);
    expect(statusFile(home, name).process_id).not.toBe(pid);
    expect(await callTool(url, 'echo', { text: 'after restart' })).toBe('after restart');
    await moatOk(home, ['rm', name]);
    expect(await workload(home, name)).toBeUndefined();
  });

  it('a server slow to listen: moat run says what it is waiting for, then runs', async () => {
    const name = uniqueName('slow');
    const result = await moat(home, ['run', '--name', name, '-e', 'MCP_LISTEN_DELAY_MS=6000', image]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^Still starting: waiting for the server to listen on port \d+ \(up to 120 s\)$/m,
    );
    expect(await callTool(printedUrl(result.stdout), 'echo', { text: 'slow' })).toBe('slow');
    await moatOk(home, ['rm', name]);
  });

  it('serves a legacy SSE server at /sse', async () => {
    const name = uniqueName('sse');
    const url = printedUrl(await moatOk(home, ['run', '--transport', 'sse', '--name', name, image]));
    expect(url).toMatch(/\/sse$/);
    expect(await callTool(url, 'get_env', { name: 'MCP_TRANSPORT' })).toBe('sse');
    await moatOk(home, ['rm', name]);
  });

  it('restarts a crashed container and records the restart', async () => {
    const name = uniqueName('crash');
    const url = printedUrl(await moatOk(home, ['run', '--name', name, image]));
    await podmanCli(['kill', name]);
    const back = await eventually('the container to be restarted', async () => {
      const w = await workload(home, name);
      return w?.status === 'running' && w.restarts === 1 ? w : undefined;
    });
    expect(back.status_context).toContain('after 1 restart');
    const history = statusFile(home, name).history;
    const restarting = history.find(
      (h) => h.status === 'restarting' && h.context.includes('exited with code'),
    );
    expect(restarting?.context).toMatch(/restarting \(attempt 1 of \d+\)/);
    expect(history.at(-1)?.status).toBe('running');
    expect(await callTool(url, 'echo', { text: 'survived' })).toBe('survived');
    await moatOk(home, ['rm', name]);
  });
});
