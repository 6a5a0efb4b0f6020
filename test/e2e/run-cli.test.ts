/**
 * `moat run` through the built binary (node dist/cli/main.js): exit codes and messages as a
 * user sees them. These cases stop before a workload starts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, moat, moatHome, removeHome } from '../support/moat-cli.js';

let home: string;

beforeAll(async () => {
  await ensureBuilt();
  home = moatHome();
}, 300_000);

afterAll(() => removeHome(home));

describe('moat run (built binary)', () => {
  it('--help exits 0 and lists the flags by section', async () => {
    const result = await moat(home, ['run', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: moat run [flags] SERVER_OR_IMAGE_OR_PACKAGE_OR_URL [-- ARGS...]');
    expect(result.stdout).toMatch(/\nTelemetry:\n(?:.*\n)*? {2}--otel-use-legacy-attributes/);
  });

  it.each([
    [['run', '--proxy-port', '0', 'img'], /--proxy-port.*expected an integer from 1 to 65535/, {}],
    [
      ['run', '--allow-docker-gateway', '--isolate-network=false', 'img'],
      /--allow-docker-gateway only applies with network isolation/,
      {},
    ],
    [['run', '--otel-sampling-rate', '2', 'img'], /--otel-sampling-rate/, {}],
    [['run', '--tools', 'a,,b', 'img'], /--tools.*without empty items/, { MOAT_DEBUG: 'true' }],
  ])('%j exits 2 without a stack trace', async (args, message, env) => {
    const result = await moat(home, args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('--from-config with other flags names them', async () => {
    const file = join(home, 'exported.json');
    writeFileSync(file, '{}');
    const result = await moat(home, [
      'run',
      '--from-config',
      file,
      '-e',
      'A=1',
      '--group',
      'g',
      '--tools',
      't',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--from-config cannot be used with other configuration flags: --env --tools (allowed with it: ',
    );
  });

  it.each([
    [
      { transport: 'tcp' },
      /field transport: Invalid option: expected one of "stdio"\|"sse"\|"streamable-http"/,
    ],
    [{ rate_limit_config: {} }, /unknown field rate_limit_config \(not supported by moat\)/],
  ])('--from-config with %j names the field', async (fields, message) => {
    const file = join(home, 'bad.json');
    const config = { image: 'i', name: 'n', transport: 'stdio', host: 'h', port: 1 };
    writeFileSync(file, JSON.stringify({ ...config, ...fields }));
    const result = await moat(home, ['run', '--from-config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([
    [{ session_ttl: '2 hours' }, 'field session_ttl: expected a positive duration such as 30s, 5m or 2h0m0s'],
    [{ proxy_read_timeout: '0s' }, 'field proxy_read_timeout: expected a positive duration'],
    [
      { remote_auth_config: { bearer_token: 'T,target=bearer_token', bearer_token_file: '/t' } },
      'field remote_auth_config.bearer_token_file: cannot be set together with bearer_token',
    ],
  ])('--from-config refuses %j before anything is saved or started', async (fields, message) => {
    const file = join(home, 'late.json');
    const remote = 'http://127.0.0.1:9/mcp';
    const config = { image: remote, remote_url: remote, name: 'late', transport: 'streamable-http' };
    writeFileSync(file, JSON.stringify({ ...config, host: '127.0.0.1', port: 0, ...fields }));
    const result = await moat(home, ['run', '--from-config', file, '--skip-remote-check']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const list = await moat(home, ['list', '--all', '--format', 'json']);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain('"late"');
  });

  it('--from-config with the same file minus the bad field saves the workload (the check above can fail)', async () => {
    const file = join(home, 'fine.json');
    const remote = 'http://127.0.0.1:9/mcp';
    const config = { image: remote, remote_url: remote, name: 'fine', transport: 'streamable-http' };
    writeFileSync(file, JSON.stringify({ ...config, host: '127.0.0.1', port: 0, session_ttl: '2h0m0s' }));
    try {
      const result = await moat(home, ['run', '--from-config', file, '--skip-remote-check']);
      expect(result.stderr).not.toMatch(/session_ttl/);
      const list = await moat(home, ['list', '--all', '--format', 'json']);
      expect(list.stdout).toContain('"fine"');
    } finally {
      await moat(home, ['rm', 'fine']);
    }
  });

  it('moat version prints the version', async () => {
    const result = await moat(home, ['version']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^moat \d+\.\d+\.\d+ \(node /);
  });

  it('moat supervise (internal) needs exactly one name, and is not in the help', async () => {
    for (const args of [
      ['supervise'],
      ['supervise', 'a', 'b'],
      ['supervise', '--debug'],
      ['supervise', '--foreground'],
      ['supervise', '--remove-after', 'a'],
      ['supervise', '--foreground', 'a', '--remove-after'],
    ]) {
      const result = await moat(home, args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('usage: moat supervise <name>');
    }
    const help = await moat(home, ['--help']);
    expect(help.stdout).toContain('Commands:');
    expect(help.stdout).not.toContain('supervise');
  });
});
