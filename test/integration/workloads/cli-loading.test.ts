/**
 * `moat list` loads only what listing needs (docs/performance.md, "CLI responsiveness"): the
 * built CLI as a whole process, with a module hook that records every module it loads. Help still
 * names every command, and an unknown command still gets suggestions. The compile cache lands in
 * moat's cache directory and is skipped where it cannot be written.
 */
import { execFile } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { moatDirs } from '../../../src/util/paths.js';
import { WorkloadStore } from '../../../src/workloads/store.js';
import { MOAT_MAIN, moat, moatHome, removeHome, testMoatHome } from '../../support/moat-cli.js';

const home = testMoatHome();

/** Records each loaded module's URL on stderr, one `LOADED <url>` line each. */
const RECORD_LOADS = `data:text/javascript,${encodeURIComponent(
  "import { registerHooks } from 'node:module'; import { writeSync } from 'node:fs';" +
    "registerHooks({ load(url, context, next) { writeSync(2, 'LOADED ' + url + '\\n'); return next(url, context); } });",
)}`;

async function loadedBy(args: string[], moatHomeDir = home): Promise<string[]> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', RECORD_LOADS, MOAT_MAIN, ...args],
    {
      env: { ...process.env, MOAT_HOME: moatHomeDir },
      timeout: 60_000,
    },
  );
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length));
}

/**
 * What neither `moat list` nor `moat --help` loads: image verification, the HTTP client, the
 * schema library (a listed RunConfig is shown as saved; the commands that start it validate it),
 * the YAML parser, the OAuth client and the logger (neither logs); and `more` besides.
 */
function expectNoneLoaded(loaded: string[], more: string[]): void {
  for (const absent of [
    '/node_modules/@sigstore/',
    '/node_modules/undici/',
    '/node_modules/zod/',
    '/node_modules/yaml/',
    '/node_modules/openid-client/',
    '/node_modules/pino/',
    ...more,
  ])
    expect(loaded.filter((url) => url.includes(absent))).toEqual([]);
}

describe('what a moat command loads', { timeout: 120_000 }, () => {
  it('moat list loads neither other commands nor their heavy dependencies, with a workload saved', async () => {
    const listHome = moatHome();
    try {
      // A stopped remote workload: listing it reads its RunConfig and status, and asks no container engine.
      const store = new WorkloadStore(moatDirs({ MOAT_HOME: listHome }));
      await store.saveRunConfig({
        schema_version: 'v0.1.0',
        image: 'https://example.com/mcp',
        remote_url: 'https://example.com/mcp',
        name: 'listed',
        transport: 'streamable-http',
        host: '127.0.0.1',
        port: 4100,
        permission_profile: null,
        group: 'default',
      });
      await store.updateStatus('listed', { status: 'stopped', context: 'stopped on request' });
      const loaded = await loadedBy(['list', '--all'], listHome);
      expect(loaded.some((url) => url.endsWith('/dist/cli/list.js'))).toBe(true);
      expectNoneLoaded(loaded, [
        '/dist/cli/run.js',
        '/dist/cli/registry.js',
        // No lock is taken.
        '/node_modules/proper-lockfile/',
        '/dist/runtime/docker/engine.js',
      ]);
      const listed = await moat(listHome, ['list', '--all']);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^listed +stopped +streamable-http +- +default /m);
    } finally {
      removeHome(listHome);
    }
  });

  it("keeps Node's compile cache in moat's cache directory, and runs without it where it cannot be written", async () => {
    const cacheHome = moatHome();
    try {
      const version = await moat(cacheHome, ['--version']);
      expect(version.code).toBe(0);
      // Node writes the cache when the process exits.
      expect(
        readdirSync(join(cacheHome, 'cache', 'compile-cache'), { recursive: true }).length,
      ).toBeGreaterThan(0);

      // MOAT_HOME under a regular file: no cache directory can be made there.
      const blocker = join(cacheHome, 'not-a-directory');
      writeFileSync(blocker, '');
      const blocked = await moat(join(blocker, 'home'), ['--version']);
      expect(blocked).toMatchObject({ code: 0, stdout: version.stdout, stderr: '' });
    } finally {
      removeHome(cacheHome);
    }
  });

  it('moat --help lists every command without loading what the commands do, and a typo gets a suggestion', async () => {
    // Every command is built for help; each loads its work when it runs.
    const loaded = await loadedBy(['--help']);
    expect(loaded.some((url) => url.endsWith('/dist/cli/run.js'))).toBe(true);
    expectNoneLoaded(loaded, ['/dist/cli/run-action.js', '/dist/cli/registry-output.js']);
    const help = await moat(home, ['--help']);
    expect(help.code).toBe(0);
    for (const name of ['run', 'list|ls', 'secret', 'registry', 'tools', 'config', 'group', 'restart'])
      expect(help.stdout).toMatch(new RegExp(`^  ${name.replace('|', '\\|')} `, 'm'));
    const typo = await moat(home, ['lst']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('list');
  });
});
