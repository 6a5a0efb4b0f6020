/**
 * `moat secret` through the built binary: values go in on stdin (never argv), come out only when
 * asked, wrong passwords and read-only providers fail with clear errors, and concurrent writers
 * lose nothing.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, MOAT_MAIN } from '../../support/moat-cli.js';

let home: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function secret(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MOAT_MAIN, 'secret', ...args], {
      env: { ...process.env, MOAT_HOME: home, MOAT_SECRETS_PASSWORD: 'cli-password', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

beforeAll(async () => {
  await ensureBuilt();
  home = await mkdtemp(join(tmpdir(), 'moat-secret-cli-'));
}, 300_000);
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('moat secret', { timeout: 120_000 }, () => {
  it('stores a value from stdin, lists names, and prints a value to a pipe only with --reveal', async () => {
    const set = await secret(['set', 'GITHUB_TOKEN'], { input: 'ghp_fromstdin\n' });
    expect(set).toMatchObject({ code: 0, stdout: '' });
    expect(set.stderr).toContain('Secret GITHUB_TOKEN stored in the encrypted provider');
    expect((await stat(join(home, 'data', 'secrets_encrypted'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(home, 'data', 'secrets_encrypted'), 'utf8')).not.toContain('ghp_fromstdin');

    expect(await secret(['list'])).toMatchObject({ code: 0, stdout: 'GITHUB_TOKEN\n' });
    expect(await secret(['get', 'GITHUB_TOKEN', '--reveal'])).toMatchObject({
      code: 0,
      stdout: 'ghp_fromstdin\n',
    });
    const hidden = await secret(['get', 'GITHUB_TOKEN']);
    expect(hidden.code).toBe(2);
    expect(hidden.stdout).toBe('');
    expect(hidden.stderr).toContain('prints a value to a pipe or file only with --reveal');

    expect(await secret(['delete', 'GITHUB_TOKEN'])).toMatchObject({ code: 0 });
    const again = await secret(['delete', 'GITHUB_TOKEN']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('Error: secret GITHUB_TOKEN not found\n');
  });

  it('never takes a value from the command line and refuses empty values and reserved names', async () => {
    const argv = await secret(['set', 'X', 'value-on-argv']);
    expect(argv.code).toBe(2);
    expect(argv.stderr).toMatch(/too many arguments/);
    const empty = await secret(['set', 'X'], { input: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no value for secret X');
    const reserved = await secret(['set', '__moat_oauth_X'], { input: 'v' });
    expect(reserved.code).toBe(2);
    expect(reserved.stderr).toContain('reserved for moat');
  });

  it('names a wrong password without a stack trace', async () => {
    await secret(['set', 'A'], { input: 'a' });
    const wrong = await secret(['list'], { env: { MOAT_SECRETS_PASSWORD: 'not-it' } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(
      /^Error: cannot decrypt the secrets file .*password is wrong \(check MOAT_SECRETS_PASSWORD\)/,
    );
    expect(wrong.stderr).not.toContain('    at ');
  });

  it('reads the environment provider and refuses to write to it', async () => {
    const env = { MOAT_SECRETS_PROVIDER: 'environment', MOAT_SECRET_API_KEY: 'from-env' };
    expect(await secret(['list'], { env })).toMatchObject({ code: 0, stdout: 'API_KEY\n' });
    expect(await secret(['get', 'API_KEY', '--reveal'], { env })).toMatchObject({ stdout: 'from-env\n' });
    const set = await secret(['set', 'B'], { env, input: 'b' });
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('the environment secrets provider is read-only');
    const bad = await secret(['list'], { env: { MOAT_SECRETS_PROVIDER: 'vault' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'invalid secrets provider "vault" (MOAT_SECRETS_PROVIDER): use encrypted, environment, none',
    );
  });

  it('keeps every value when several processes write at once', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `CONCURRENT_${i}`);
    const results = await Promise.all(names.map((n) => secret(['set', n], { input: `v-${n}` })));
    expect(results.map((r) => r.code)).toEqual(names.map(() => 0));
    const listed = (await secret(['list'])).stdout.split('\n');
    expect(listed).toEqual(expect.arrayContaining(names));
    expect(await secret(['get', 'CONCURRENT_3', '--reveal'])).toMatchObject({ stdout: 'v-CONCURRENT_3\n' });
  });

  it('asks for the value and a new password on a terminal without echoing them', async () => {
    const ttyHome = await mkdtemp(join(tmpdir(), 'moat-secret-tty-'));
    try {
      // `script` gives the command a pseudo-terminal; each answer is typed after its prompt appears.
      const child = spawn(
        'script',
        ['-qec', `${process.execPath} ${MOAT_MAIN} secret set TTY_SECRET`, '/dev/null'],
        {
          env: { ...process.env, MOAT_HOME: ttyHome, MOAT_SECRETS_PASSWORD: '' },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      let output = '';
      const answers: Array<[string, string]> = [
        ['Value for TTY_SECRET: ', 'typed-secret-value\r'],
        ['Secrets password: ', 'typed-password\r'],
        ['Repeat the password', 'typed-password\r'],
      ];
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString();
        const next = answers[0];
        if (next && output.includes(next[0])) {
          answers.shift();
          child.stdin.write(next[1]);
        }
      });
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code).toBe(0);
      expect(output).toContain('Secret TTY_SECRET stored in the encrypted provider');
      expect(output).not.toContain('typed-secret-value');
      expect(output).not.toContain('typed-password');
      const read = await secret(['get', 'TTY_SECRET', '--reveal'], {
        env: { MOAT_HOME: ttyHome, MOAT_SECRETS_PASSWORD: 'typed-password' },
      });
      expect(read.stdout).toBe('typed-secret-value\n');
    } finally {
      await rm(ttyHome, { recursive: true, force: true });
    }
  });
});
