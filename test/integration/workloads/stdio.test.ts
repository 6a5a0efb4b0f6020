/**
 * A stdio MCP server managed by the real `moat` binary on real Podman: run (detached), list,
 * call through the proxy with an MCP SDK client, logs, stop, start, export → run
 * --from-config, a killed supervisor, rm.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import {
  callTool,
  moat,
  eventually,
  testMoatHome,
  moatOk,
  printedUrl,
  spawnMoat,
  statusFile,
  workload,
} from '../../support/moat-cli.js';
import { podmanCli, testRuntime, uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

/** Runs `moat logs --follow …` until `text` appears, then Ctrl-C; resolves with the exit code. */
function followUntil(args: string[], text: string): Promise<number | null> {
  const child = spawnMoat(home, args);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += String(d);
      if (out.includes(text)) process.kill(child.pid!, 'SIGINT');
    });
    child.once('exit', (code) =>
      out.includes(text) ? resolve(code) : reject(new Error(`exited ${code}: ${out}`)),
    );
  });
}

describe('stdio workload lifecycle', { timeout: 300_000 }, () => {
  it('runs detached, serves MCP through the proxy, stops, starts again on the same URL, and is removed', async () => {
    const name = uniqueName('stdio');
    const run = await moat(home, ['run', '--transport', 'stdio', '--name', name, image]);
    expect(run.code).toBe(0);
    // Image preparation is shown on the terminal (plain lines when stderr is not a TTY).
    expect(run.stderr).toContain(`Using local image ${image}`);
    // Isolation is on by default and enforced: no warning, and the workload has its sandbox.
    expect(run.stderr).not.toContain('isolation');
    expect(await podmanCli(['inspect', '-f', '{{.HostConfig.NetworkMode}}', name])).toContain(`container:`);
    const out = run.stdout;
    expect(out).toContain(`Workload "${name}" is running`);
    const url = printedUrl(out);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const listed = await moatOk(home, ['list']);
    expect(listed).toMatch(
      new RegExp(`^${name}\\s+running\\s+stdio\\s+${url.replace(/\./g, '\\.')}\\s+default\\s`, 'm'),
    );
    expect(await callTool(url, 'echo', { text: 'through the proxy' })).toBe('through the proxy');
    expect(await callTool(url, 'get_env', { name: 'MCP_TRANSPORT' })).toBe('stdio');

    // The server's stderr is in the container log; the supervisor's in the proxy log.
    expect(await moatOk(home, ['logs', name])).toContain('moat-test-stdio: ready');
    expect(await moatOk(home, ['logs', '--proxy', name])).toContain('workload running');
    expect(await followUntil(['logs', '--follow', '--proxy', name], 'workload running')).toBe(0);

    expect(await moatOk(home, ['stop', name])).toContain(`Stopped ${name}`);
    expect((await workload(home, name))?.status).toBe('stopped');
    expect(await moatOk(home, ['list'])).not.toContain(name);
    const runtime = await testRuntime();
    expect((await runtime.inspectContainer(name))?.running).toBe(false);
    await expect(callTool(url, 'echo', { text: 'x' })).rejects.toThrow();

    const restarted = await moatOk(home, ['start', name]);
    expect(printedUrl(restarted)).toBe(url);
    expect(await callTool(url, 'echo', { text: 'again' })).toBe('again');
    expect(statusFile(home, name).history.map((h) => h.status)).toEqual(
      expect.arrayContaining(['starting', 'running', 'stopping', 'stopped']),
    );

    expect(await moatOk(home, ['rm', name])).toContain(`Removed ${name}`);
    expect(await runtime.inspectContainer(name)).toBeUndefined();
    expect(await workload(home, name)).toBeUndefined();
    for (const dir of ['state/runconfigs', 'data/statuses', 'data/logs']) {
      expect(existsSync(join(home, dir, `${name}.${dir === 'data/logs' ? 'log' : 'json'}`))).toBe(false);
    }
  });

  it('exports the run configuration and brings the workload back with run --from-config', async () => {
    const name = uniqueName('export');
    printedUrl(
      await moatOk(home, ['run', '--transport', 'stdio', '--name', name, '-e', 'GREETING=hi', image]),
    );
    const file = join(home, 'exported.json');
    expect(await moatOk(home, ['export', name, file])).toContain(file);
    const exported = JSON.parse(readFileSync(file, 'utf8'));
    expect(exported).toMatchObject({ name, image, transport: 'stdio', env_vars: { GREETING: 'hi' } });

    await moatOk(home, ['rm', name]);
    // The proxy port moat picked is not pinned in the export (test/integration/workloads/export.test.ts).
    expect(exported.port).toBe(0);
    const back = printedUrl(await moatOk(home, ['run', '--from-config', file]));
    expect(await callTool(back, 'get_env', { name: 'GREETING' })).toBe('hi');
    await moatOk(home, ['rm', name]);
  });

  it('reports a killed supervisor truthfully and brings the workload back with start', async () => {
    const name = uniqueName('killed');
    const url = printedUrl(await moatOk(home, ['run', '--transport', 'stdio', '--name', name, image]));
    const pid = statusFile(home, name).process_id;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('supervise');
    process.kill(pid, 'SIGKILL');
    const seen = await eventually('the killed supervisor to show', async () => {
      const w = await workload(home, name);
      return w?.status === 'running' ? undefined : w;
    });
    expect(seen.status).toBe('unhealthy');
    expect(seen.status_context).toContain(`supervisor process (pid ${pid}) is not running`);
    expect(seen.status_context).toContain(`moat start ${name}`);

    expect(printedUrl(await moatOk(home, ['start', name]))).toBe(url);
    expect((await workload(home, name))?.status).toBe('running');
    expect(await callTool(url, 'echo', { text: 'back' })).toBe('back');
    await moatOk(home, ['rm', name]);
  });
});
