import { describe, expect, it } from 'vitest';
import { TRANSPORTS } from '../config/runconfig.js';
import { normalizeBoolAssignments, parseRunArgv } from './run-command.js';
import type { RunFlagSpec } from './run-flag-spec.js';
import { attributeName, defaultRunFlags, flagRow } from './run-flag-values.js';
import { RUN_FLAGS } from './run-flags.js';

const BOOLS = RUN_FLAGS.filter((r) => r.type === 'bool' && r.long !== 'help');

describe('parseRunArgv', () => {
  it('gives every flag its default when none is set', () => {
    const parsed = parseRunArgv(['img']);
    expect(parsed.flags).toEqual(defaultRunFlags());
    expect(parsed.explicit.size).toBe(0);
    expect(parsed).toMatchObject({ target: 'img', serverArgs: [] });
  });

  it.each(BOOLS.map((r) => r.long))('--%s accepts =true, =false and the bare form', (long) => {
    const key = attributeName(long);
    expect((parseRunArgv([`--${long}=false`, 'img']).flags as Record<string, unknown>)[key]).toBe(false);
    expect((parseRunArgv([`--${long}=true`, 'img']).flags as Record<string, unknown>)[key]).toBe(true);
    expect((parseRunArgv([`--${long}`, 'img']).flags as Record<string, unknown>)[key]).toBe(true);
    expect(parseRunArgv([`--${long}=0`, 'img']).explicit.has(long)).toBe(true);
  });

  it('the last of repeated boolean settings wins', () => {
    expect(parseRunArgv(['--isolate-network', '--isolate-network=false', 'img']).flags.isolateNetwork).toBe(
      false,
    );
    expect(parseRunArgv(['--isolate-network=false', '--isolate-network', 'img']).flags.isolateNetwork).toBe(
      true,
    );
  });

  it('passes everything after the first -- to the server verbatim', () => {
    const parsed = parseRunArgv([
      '--name',
      'x',
      'img',
      '--',
      '-v',
      '--port',
      '8080',
      '-e',
      'A=1',
      '--',
      '--help',
    ]);
    expect(parsed.target).toBe('img');
    expect(parsed.serverArgs).toEqual(['-v', '--port', '8080', '-e', 'A=1', '--', '--help']);
    expect(parsed.flags.volume).toEqual([]);
    expect(parsed.flags.env).toEqual([]);
  });

  it('keeps a --flag=false after -- as a server argument', () => {
    expect(parseRunArgv(['img', '--', '--isolate-network=false']).serverArgs).toEqual([
      '--isolate-network=false',
    ]);
  });

  it('does not rewrite the value of a value-taking flag', () => {
    expect(parseRunArgv(['-e', '--stateless=false', 'img']).flags).toMatchObject({
      env: ['--stateless=false'],
      stateless: false,
    });
  });

  it('accepts flags after the target', () => {
    const parsed = parseRunArgv(['img', '--name', 'x', '-f']);
    expect(parsed).toMatchObject({ target: 'img', flags: { name: 'x', foreground: true } });
  });

  it('short forms -f -p -l -v -e', () => {
    const parsed = parseRunArgv(['-f', '-p', '1:2', '-l', 'a=b', '-v', '/a:/b', '-e', 'K=V', 'img']);
    expect(parsed.flags).toMatchObject({
      foreground: true,
      publish: ['1:2'],
      label: ['a=b'],
      volume: ['/a:/b'],
      env: ['K=V'],
    });
    expect([...parsed.explicit].sort()).toEqual(['env', 'foreground', 'label', 'publish', 'volume']);
  });

  it('strings flags are comma-separated and repeatable', () => {
    expect(parseRunArgv(['--tools', 'a, b', '--tools', 'c', 'img']).flags.tools).toEqual(['a', 'b', 'c']);
  });

  it('durations are milliseconds; zero is allowed where it means the default', () => {
    expect(parseRunArgv(['--session-ttl', '2m30s', '--proxy-read-timeout', '0', 'img']).flags).toMatchObject({
      sessionTtl: 150_000,
      proxyReadTimeout: 0,
    });
  });

  it.each([
    [['img', 'extra'], /run takes one target, got 2: img extra; put arguments for the server after --/],
    [['--nope', 'img'], /unknown option '--nope'/],
    [['--name'], /option '--name <name>' argument missing/],
    [['--foreground=yes', 'img'], /--foreground takes true or false, got "yes"/],
  ])('rejects %j', (argv, error) => {
    expect(() => parseRunArgv(argv)).toThrow(error);
  });

  it('has no target with --from-config, and reads the server arguments', () => {
    expect(parseRunArgv(['--from-config', 'f.json', '--', 'x'])).toMatchObject({ serverArgs: ['x'] });
    expect(parseRunArgv(['--from-config', 'f.json']).target).toBeUndefined();
  });
});

describe('normalizeBoolAssignments', () => {
  it('turns --x=false into the hidden negation and leaves the rest alone', () => {
    expect(
      normalizeBoolAssignments(['--stateless=false', '--name=a', '--debug=1', '--', '--stateless=false']),
    ).toEqual(['--no-stateless', '--name=a', '--debug', '--', '--stateless=false']);
  });
});

describe('flag choices', () => {
  it('--transport offers exactly the RunConfig transports (in the spec order)', () => {
    expect([...((flagRow('transport') as RunFlagSpec).choices ?? [])].sort()).toEqual([...TRANSPORTS].sort());
  });
});
