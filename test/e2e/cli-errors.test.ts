/**
 * One error style and one exit-code rule for every command, through the built binary: a usage
 * error (unknown option, missing or extra argument, a bad choice, a missing subcommand) exits 2,
 * a runtime failure exits 1, and each prints one `Error: …` line without a stack trace.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MOAT_MAIN, moat, testMoatHome } from '../support/moat-cli.js';
import { uniqueName } from '../support/podman.js';

const home = testMoatHome();

/** Each command's usage errors, as users type them. */
const USAGE_ERRORS: Array<[string[], RegExp]> = [
  [['bogus'], /^Error: unknown command 'bogus'/],
  [['--bogus'], /^Error: unknown option '--bogus'/],
  [['run', '--bogus', 'img'], /^Error: unknown option '--bogus'/],
  [['run'], /^Error: missing target/],
  [['list', '--bogus'], /^Error: unknown option '--bogus'/],
  [['list', '--format', 'yaml'], /^Error: option '--format <format>' argument 'yaml' is invalid/],
  [['list', 'extra'], /^Error: too many arguments for 'list'/],
  [['stop', '--bogus'], /^Error: unknown option '--bogus'/],
  [['stop'], /^Error: .*name a workload|^Error: /],
  [['start', '--bogus'], /^Error: unknown option '--bogus'/],
  [['restart', '--bogus'], /^Error: unknown option '--bogus'/],
  [['rm', '--bogus'], /^Error: unknown option '--bogus'/],
  [['logs'], /^Error: missing required argument 'name'/],
  [['logs', 'a', 'b'], /^Error: too many arguments for 'logs'/],
  [['logs', '--format', 'yaml', 'a'], /^Error: option '--format <format>' argument 'yaml' is invalid/],
  [['export'], /^Error: missing required argument 'name'/],
  [['export', 'a'], /^Error: missing required argument 'path'/],
  [['export', 'a', 'b', 'c'], /^Error: too many arguments for 'export'/],
  [['group'], /^Usage: moat group/],
  [['group', 'create'], /^Error: missing required argument 'name'/],
  [['group', 'create', '--bogus', 'g'], /^Error: unknown option '--bogus'/],
  [['group', 'rm'], /^Error: missing required argument 'name'/],
  [['group', 'list', 'extra'], /^Error: too many arguments for 'list'/],
  [['secret'], /^Usage: moat secret/],
  [['secret', 'set'], /^Error: missing required argument 'name'/],
  [['secret', 'get', '--bogus', 'x'], /^Error: unknown option '--bogus'/],
  [['secret', 'list', '--format', 'yaml'], /^Error: /],
  [['secret', 'delete'], /^Error: missing required argument 'name'/],
  [['version', 'extra'], /^Error: too many arguments for 'version'/],
  [['stop', 'no-such-workload'], /^Error: workload "no-such-workload" does not exist/],
  [['export', 'no-such-workload', '/tmp/x.json'], /^Error: workload "no-such-workload" does not exist/],
];

describe('every command: usage errors exit 2 in one style', () => {
  it.each(USAGE_ERRORS)('moat %j', async (args, message) => {
    const result = await moat(home, args, { MOAT_SECRETS_PROVIDER: 'environment' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/^error:/m); // commander's own lower-case style is gone
    expect(result.stderr).not.toMatch(/\n\s+at /);
    if (result.stderr.startsWith('Error:'))
      expect(result.stderr.trimEnd().split('\n')[0]).toMatch(/^Error: /);
  });
});

describe('runtime failures exit 1', () => {
  it('moat run with no reachable container engine', async () => {
    const result = await moat(
      home,
      ['run', '--name', uniqueName('noengine'), '--transport', 'stdio', 'img:1'],
      {
        MOAT_RUNTIME_SOCKET: '/nonexistent/moat-test.sock',
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: /);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('--version', () => {
  it.each([['--version'], ['-v']])('moat %s prints the same line as moat version', async (flag) => {
    const version = await moat(home, ['version']);
    const result = await moat(home, [flag]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(version.stdout);
    expect(result.stdout).toMatch(/^moat \d+\.\d+\.\d+ \(node /);
  });

  it('moat --help lists --version and describes only what works', async () => {
    const result = await moat(home, ['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('-v, --version');
    const help = result.stdout.replace(/\s+/g, ' ');
    expect(help).toContain('npx://, uvx:// or go:// package');
    expect(help).toMatch(/ registry Servers you can run by name/);
    expect(help).toMatch(/ search \[options\] <term> Search the registry/);
  });

  it('moat run -v stays the volume flag', async () => {
    const result = await moat(home, ['run', '-v', 'only-one-part', 'img:1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('expected host-path:container-path');
  });
});

describe('an old Node.js', () => {
  // The machine's own node is 20 (the toolchain's 24 runs the tests): the refusal is checked on it.
  const OLD_NODE = '/usr/bin/node';

  it('is refused with one line saying how to get Node 22+', async () => {
    const version = await run(OLD_NODE, ['--version']);
    expect(version.stdout).toMatch(/^v(1\d|2[01])\./);
    const result = await run(OLD_NODE, [MOAT_MAIN, 'list']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^Error: moat needs Node\.js 22 or newer, and this is Node\.js 2?\d\.[\d.]+; install Node\.js 22\+/,
    );
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}
