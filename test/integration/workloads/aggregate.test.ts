/**
 * `moat group serve` end to end with the real `moat` binary on real Podman: a group of three
 * workloads of different kinds (a stdio server in a container, a streamable-HTTP server in a
 * container, and a real MCP SDK server on loopback run as a remote URL) served as one endpoint,
 * which real MCP SDK clients of both eras list and call; the aggregate is a workload like any other (`moat
 * list` shows it with its URL, stop, start, export and `moat run --from-config`, rm, --foreground)
 * whose proxy applies the front's policies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { STATELESS_REVISION } from '../../../src/mcp/revisions.js';
import { groupOfThreeNames, runGroupOfThree } from '../../support/aggregate-group.js';
import { testHostServer } from '../../support/host-server.js';
import { testServerImage } from '../../support/images.js';
import {
  callTool,
  eventually,
  moat,
  moatOk,
  printedUrl,
  spawnMoat,
  testMoatHome,
  toolNames,
  urlPrintedBy,
  workload,
} from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

const remote = testHostServer();
const home = testMoatHome();
let stdioImage: string;
let httpImage: string;

beforeAll(async () => {
  [stdioImage, httpImage] = await Promise.all([
    testServerImage('stdio-server'),
    testServerImage('http-server'),
  ]);
});

describe('moat group serve', { timeout: 300_000 }, () => {
  it('serves a stdio, an HTTP and a remote workload of one group as one endpoint, managed like any workload', async () => {
    const { group, stdio, http, far } = await runGroupOfThree(
      home,
      groupOfThreeNames('agg'),
      { stdio: stdioImage, http: httpImage },
      remote.url,
    );

    const name = `${group}-aggregate`;
    const url = printedUrl(await moatOk(home, ['group', 'serve', group]));
    const expected = [`${stdio}__echo`, `${http}__echo`, `${far}__echo`];
    expect(await toolNames(url)).toEqual(expect.arrayContaining(expected));
    for (const member of [stdio, http, far])
      expect(await callTool(url, `${member}__echo`, { text: `via ${member}` })).toBe(`via ${member}`);
    // A 2026-07-28 client too: the aggregate answers it itself and reaches each member in that era.
    const modern = new Client(
      { name: 'moat-test-2026', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: STATELESS_REVISION } } },
    );
    await modern.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect((await modern.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(expected));
      for (const member of [stdio, http, far]) {
        const answer = await modern.callTool({
          name: `${member}__echo`,
          arguments: { text: `2026 ${member}` },
        });
        expect(answer.content).toEqual([{ type: 'text', text: `2026 ${member}` }]);
      }
    } finally {
      await modern.close();
    }

    // A workload of the group it serves, listed with its URL; it never serves itself.
    expect(await workload(home, name)).toMatchObject({ status: 'running', url, group, remote: false });
    expect(await moatOk(home, ['list'])).toMatch(new RegExp(`${name}\\s.*${url.replace(/[.]/g, '\\.')}`));
    expect((await toolNames(url)).some((tool) => tool.startsWith(`${name}__`))).toBe(false);

    // The member set is live: a stopped member leaves the lists, and comes back when started.
    await moatOk(home, ['stop', http]);
    await eventually('the stopped member to leave the aggregate', async () =>
      (await toolNames(url)).includes(`${http}__echo`) ? undefined : true,
    );
    await moatOk(home, ['start', http]);
    await eventually('the started member to join again', async () =>
      (await toolNames(url)).includes(`${http}__echo`) ? true : undefined,
    );

    await moatOk(home, ['stop', name]);
    expect((await workload(home, name))?.status).toBe('stopped');
    await expect(toolNames(url)).rejects.toThrow();
    expect(printedUrl(await moatOk(home, ['start', name]))).toBe(url);
    expect(await toolNames(url)).toEqual(expect.arrayContaining(expected));

    const file = join(home, `${name}.json`);
    await moatOk(home, ['export', name, file]);
    const exported = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(exported).toMatchObject({ image: '', aggregate: { group, naming: { strategy: 'prefix' } } });
    await moatOk(home, ['rm', name]);
    const again = printedUrl(await moatOk(home, ['run', '--from-config', file]));
    expect(await toolNames(again)).toEqual(expect.arrayContaining(expected));
    expect(await callTool(again, `${far}__echo`, { text: 'round trip' })).toBe('round trip');

    await moatOk(home, ['rm', '--group', group]);
    await moatOk(home, ['group', 'rm', group]);
  });

  it("serves in the foreground until Ctrl-C with the front's policies (--tools), then removes itself", async () => {
    const group = uniqueName('aggfg');
    const far = uniqueName('far');
    await moatOk(home, ['group', 'create', group]);
    await moatOk(home, ['run', remote.url, '--name', far, '--group', group]);
    const child = spawnMoat(home, ['group', 'serve', group, '-f', '--tools', `${far}__echo`]);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await urlPrintedBy(child);
    expect(await toolNames(url)).toEqual([`${far}__echo`]);
    expect((await workload(home, `${group}-aggregate`))?.status).toBe('running');
    process.kill(child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(await workload(home, `${group}-aggregate`)).toBeUndefined();
    await moatOk(home, ['rm', far]);
    await moatOk(home, ['group', 'rm', group]);
  });

  it('refuses a group that does not exist (exit 2, naming it) and a flag it cannot use, saving nothing', async () => {
    const missing = await moat(home, ['group', 'serve', 'no-such-group']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('group "no-such-group" does not exist');
    expect(missing.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const volume = await moat(home, ['group', 'serve', 'default', '--volume', '/tmp:/data']);
    expect(volume.code).toBe(2);
    expect(volume.stderr).toContain('--volume cannot be used with moat group serve');
    expect(await workload(home, 'no-such-group-aggregate')).toBeUndefined();
    expect(await workload(home, 'default-aggregate')).toBeUndefined();
  });
});
