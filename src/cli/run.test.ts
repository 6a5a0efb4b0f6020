/**
 * `moat run` through the whole CLI in-process (runCli): help, exit codes and error rendering.
 * Every case here fails before a workload would start, so no runtime is needed.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram, runCli } from './program.js';
import { parseRunArgv, readParsedRun, type ParsedRun } from './run-command.js';
import { SECTIONS, type RunFlagSpec } from './run-flag-spec.js';
import { RUN_FLAGS } from './run-flags.js';
import { resolveRunConfig } from './run-action.js';

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await runCli(argv, { stdout, stderr });
  return { code, stdout: out, stderr: err };
}

describe('moat run --help', () => {
  it('lists all 106 long flags (93 of the spec, --skip-remote-check, --upstream-timeout, --allow-metadata-address, three rate-limit flags, --tool-pinning, --tool-search, --otel-protocol, --remote-auth-client-metadata-url --request-state-ttl, --guardrail-config and --authz-argument-mapping), each in its section, sections in spec order', async () => {
    const { code, stdout } = await cli(['run', '--help']);
    expect(code).toBe(0);
    const headings = Object.values(SECTIONS).map((title) => stdout.indexOf(`\n${title}:\n`));
    expect(headings.every((i) => i > 0)).toBe(true);
    expect([...headings].sort((a, b) => a - b)).toEqual(headings);
    for (const row of RUN_FLAGS as readonly RunFlagSpec[]) {
      const line = new RegExp(`^  ${row.short ? `-${row.short}, ` : ''}--${row.long}[ \\n]`, 'm');
      const match = line.exec(stdout);
      expect(match, `--${row.long} in help`).not.toBeNull();
      const section = Object.keys(SECTIONS).indexOf(row.section);
      expect(match!.index).toBeGreaterThan(headings[section]!);
      if (section + 1 < headings.length) expect(match!.index).toBeLessThan(headings[section + 1]!);
    }
    const listed = stdout.match(/^ {2}(?:-\w, )?--[a-z0-9-]+/gm) ?? [];
    expect(listed).toHaveLength(106);
  });

  it('-h shows the same help', async () => {
    expect((await cli(['run', '-h'])).stdout).toBe((await cli(['run', '--help'])).stdout);
  });

  it('shows defaults and choices', async () => {
    const { stdout } = await cli(['run', '--help']);
    expect(stdout).toMatch(
      /--session-ttl <duration> +Session inactivity timeout; 0 uses the default \(default: 2h\)/,
    );
    expect(stdout).toMatch(
      /--image-verification <mode> .*choices: "warn", "enabled", "disabled", default: "warn"/,
    );
  });
});

describe('moat run usage errors exit 2 with one line and no stack trace', () => {
  it.each([
    [
      ['run', '--proxy-port', 'abc', 'img'],
      /--proxy-port.*'abc' is invalid\. expected an integer from 1 to 65535/,
    ],
    [['run', '--transport', 'tcp', 'img'], /--transport.*Allowed choices are sse, streamable-http, stdio/],
    [['run', '--isolate-network=perhaps', 'img'], /--isolate-network takes true or false, got "perhaps"/],
    [['run'], /missing target: moat run needs SERVER_OR_IMAGE_OR_PACKAGE_OR_URL/],
    [['run', 'img', 'other'], /run takes one target, got 2/],
    [['run', '--bogus', 'img'], /unknown option '--bogus'/],
    [['run', '--endpoint-prefix', 'x', 'img'], /--endpoint-prefix/],
    [['run', '--otel-sampling-rate', '2', 'img'], /--otel-sampling-rate/],
    [
      ['run', '--from-config', 'f.json', '--tools', 'x'],
      /--from-config cannot be used with other configuration flags: --tools/,
    ],
    [['run', '--from-config', '/nonexistent/f.json'], /cannot read run configuration \/nonexistent\/f\.json/],
    [['run', '--host', '::1', 'img'], /IPv6 addresses are not supported/],
    [['run', '-e', 'NOVALUE', 'img'], /--env: invalid value "NOVALUE": expected KEY=VALUE/],
    [
      ['run', 'Not A Valid Image'],
      /is not a registry server, image reference, protocol scheme or http\(s\) URL/,
    ],
    [['run', 'Fecth!'], /is not a registry server, .*; did you mean fetch\?/],
  ])('%j', async (argv, message) => {
    const { code, stderr } = await cli(argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});

describe('resolveRunConfig', () => {
  it('prints the --proxy-mode sse deprecation warning on stderr', async () => {
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d: Buffer) => (err += d.toString()));
    const { config } = await resolveRunConfig(
      parseRunArgv(['--transport', 'stdio', '--proxy-mode', 'sse', 'img']),
      {
        stdout: new PassThrough(),
        stderr,
      },
    );
    expect(config.proxy_mode).toBe('sse');
    expect(err).toMatch(/^Warning: the 'sse' proxy mode is deprecated/);
  });

  it('builds the basic run path without tripping the gate', async () => {
    const { config } = await resolveRunConfig(
      parseRunArgv(['--name', 'n', '-e', 'A=1', '--proxy-port', '8080', 'ghcr.io/acme/x:1', '--', '--flag']),
      { stdout: new PassThrough(), stderr: new PassThrough() },
    );
    expect(config).toMatchObject({ name: 'n', port: 8080, env_vars: { A: '1' }, cmd_args: ['--flag'] });
  });
});

describe('the run command inside the moat program', () => {
  /** Parses a full command line with the real program, capturing what the run action would get. */
  async function parseWithProgram(argv: string[]): Promise<{ parsed: ParsedRun; debug: boolean }> {
    const program = await buildProgram({ stdout: new PassThrough(), stderr: new PassThrough() }, argv);
    const run = program.commands.find((c) => c.name() === 'run') as Command;
    let result: { parsed: ParsedRun; debug: boolean } | undefined;
    run.action(() => {
      const rawArgs = (program as unknown as { rawArgs: string[] }).rawArgs;
      result = { parsed: readParsedRun(run, rawArgs), debug: Boolean(run.optsWithGlobals().debug) };
    });
    await program.parseAsync(argv, { from: 'user' });
    return result!;
  }

  it.each([
    [['run', 'img', '--', '-v', '--port', '8080', '--debug', '-h']],
    [['run', '--name', 'x', 'img', '--', '-v', '--port', '8080', '--debug', '-h']],
    [['--debug', 'run', '-e', 'A=1', 'img', '--', '-v', '--port', '8080', '--debug', '-h']],
  ])('passes the arguments after -- verbatim: %j', async (argv) => {
    const { parsed } = await parseWithProgram(argv);
    expect(parsed.target).toBe('img');
    expect(parsed.serverArgs).toEqual(['-v', '--port', '8080', '--debug', '-h']);
    expect(parsed.flags.volume).toEqual([]);
  });

  it('takes the inherited --debug before or after run', async () => {
    expect((await parseWithProgram(['--debug', 'run', 'img'])).debug).toBe(true);
    expect((await parseWithProgram(['run', '--debug', 'img'])).debug).toBe(true);
    expect((await parseWithProgram(['run', 'img'])).debug).toBe(false);
  });

  it('accepts --x=false for booleans', async () => {
    const { parsed } = await parseWithProgram([
      'run',
      '--isolate-network=false',
      '--ignore-globally=false',
      'img',
    ]);
    expect(parsed.flags).toMatchObject({ isolateNetwork: false, ignoreGlobally: false });
  });

  it('--from-config with no target and server args after -- is told apart', async () => {
    const { parsed } = await parseWithProgram(['run', '--from-config', 'f.json', '--', 'x']);
    expect(parsed.target).toBeUndefined();
    expect(parsed.serverArgs).toEqual(['x']);
  });
});
