/**
 * `moat list` loads only what listing needs (docs/performance.md, "CLI responsiveness"): the
 * built CLI as a whole process, with a module hook that records every module it loads. Help still
 * names every command, and an unknown command still gets suggestions.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MOAT_MAIN, moat, testMoatHome } from '../../support/moat-cli.js';

const home = testMoatHome();

/** Records each loaded module's URL on stderr, one `LOADED <url>` line each. */
const RECORD_LOADS = `data:text/javascript,${encodeURIComponent(
  "import { registerHooks } from 'node:module'; import { writeSync } from 'node:fs';" +
    "registerHooks({ load(url, context, next) { writeSync(2, 'LOADED ' + url + '\\n'); return next(url, context); } });",
)}`;

async function loadedBy(args: string[]): Promise<string[]> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', RECORD_LOADS, MOAT_MAIN, ...args],
    {
      env: { ...process.env, MOAT_HOME: home },
      timeout: 60_000,
    },
  );
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length));
}

describe('what a moat command loads', { timeout: 120_000 }, () => {
  it('moat list loads neither other commands nor their heavy dependencies', async () => {
    const loaded = await loadedBy(['list']);
    expect(loaded.some((url) => url.endsWith('/dist/cli/list.js'))).toBe(true);
    for (const absent of [
      '/dist/cli/run.js',
      '/dist/cli/registry.js',
      '/node_modules/@sigstore/',
      '/node_modules/undici/',
      '/node_modules/zod/',
      '/node_modules/yaml/',
      '/node_modules/openid-client/',
      '/dist/runtime/docker/engine.js',
    ])
      expect(loaded.filter((url) => url.includes(absent))).toEqual([]);
  });

  it('moat --help still lists every command, and a typo gets a suggestion', async () => {
    const help = await moat(home, ['--help']);
    expect(help.code).toBe(0);
    for (const name of ['run', 'list|ls', 'secret', 'registry', 'tools', 'config', 'group', 'restart'])
      expect(help.stdout).toMatch(new RegExp(`^  ${name.replace('|', '\\|')} `, 'm'));
    const typo = await moat(home, ['lst']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('list');
  });
});
