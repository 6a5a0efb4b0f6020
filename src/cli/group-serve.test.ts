/**
 * `moat group serve` from its command line to the RunConfig: the aggregate's naming flags, the run
 * flags its front takes, the run flags it refuses (usage errors, exit code 2, naming the flag), and
 * the RunConfig it writes read back as `moat export` / `moat run --from-config` do.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRunConfig, serializeRunConfig } from '../config/runconfig-file.js';
import { exportedRunConfig, type RunConfig } from '../config/runconfig.js';
import { isMoatError } from '../util/errors.js';
import { buildServeConfig } from './group-serve-action.js';
import { createGroupServeCommand } from './group-serve.js';
import { fsBuildContext } from './run-build-context.js';
import { AGGREGATE_REFUSED } from './run-flag-applicability.js';

const dir = mkdtempSync(join(tmpdir(), 'moat-group-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const warnings: string[] = [];
const ctx = fsBuildContext((message) => warnings.push(message), dir);

function serve(argv: string[]): RunConfig {
  const cmd = createGroupServeCommand()
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  cmd.parse(argv, { from: 'user' });
  return buildServeConfig(cmd, cmd.args[0] as string, ctx).config;
}

/** The usage error a command line gives: its message, checked to exit with code 2. */
function refusal(argv: string[]): string {
  try {
    serve(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.message;
    expect(isMoatError(err) && err.exitCode).toBe(2);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

describe('moat group serve', () => {
  it('builds an aggregate of the group, in that group, named <group>-aggregate, with no container', () => {
    const config = serve(['tools']);
    expect(config).toMatchObject({
      name: 'tools-aggregate',
      group: 'tools',
      image: '',
      transport: 'streamable-http',
      proxy_mode: 'streamable-http',
      port: 0,
      host: '127.0.0.1',
      permission_profile: null,
      aggregate: { group: 'tools', naming: { strategy: 'prefix' } },
    });
    for (const field of ['target_port', 'target_host', 'ignore_config', 'image_verification', 'remote_url'])
      expect(config).not.toHaveProperty(field);
  });

  it("gives the front every proxy policy of moat run's flag table", () => {
    const authz = file(
      'authz.json',
      '{"version":"1.0","type":"cedarv1","cedar":{"policies":[],"entities_json":"[]"}}',
    );
    const config = serve([
      'tools',
      '--name',
      'front',
      '--group',
      'fronts',
      '--proxy-port',
      '8090',
      '--oidc-issuer',
      'https://idp.example.com',
      '--oidc-audience',
      'moat',
      '--authz-config',
      authz,
      '--enable-audit',
      '--tools',
      'time__now,fetch__fetch',
      '--rate-limit',
      '60',
      '--otel-endpoint',
      'localhost:4318',
    ]);
    expect(config).toMatchObject({
      name: 'front',
      group: 'fronts',
      port: 8090,
      oidc_config: { Issuer: 'https://idp.example.com', Audience: 'moat' },
      authz_config_path: authz,
      audit_config: {},
      tools_filter: ['time__now', 'fetch__fetch'],
      rate_limit: { per_principal: { requests_per_minute: 60 } },
      telemetry_config: { endpoint: 'localhost:4318' },
      aggregate: { group: 'tools' },
    });
  });

  it.each([
    ['--volume', '/tmp:/data'],
    ['--env', 'A=1'],
    ['--transport', 'stdio'],
    ['--stateless'],
    ['--permission-profile', 'network'],
    ['--remote-auth-bearer-token', 'x'],
    ['--skip-remote-check'],
    ['--build-with', 'git'],
    ['--image-verification', 'enabled'],
    ['--from-config', 'x.json'],
    ['--token-exchange-url', 'https://sts.example.com/token'],
  ])('refuses %s, naming it', (...flag) => {
    expect(refusal(['tools', ...flag])).toBe(
      `${flag[0]} cannot be used with moat group serve; the target is the aggregate of group "tools" (moat group serve)`,
    );
  });

  it('hides the flags it refuses from its help and shows the proxy ones', () => {
    const help = createGroupServeCommand().helpInformation();
    for (const flag of AGGREGATE_REFUSED) expect(help).not.toContain(`--${flag} `);
    for (const flag of [
      '--naming',
      '--separator',
      '--priority',
      '--naming-config',
      '--oidc-issuer',
      '--tools',
    ])
      expect(help).toContain(flag);
    expect(help).toContain('<group>-aggregate');
  });

  it('takes the naming strategies with the flags each needs', () => {
    expect(serve(['tools', '--separator', '.']).aggregate?.naming).toEqual({
      strategy: 'prefix',
      separator: '.',
    });
    expect(serve(['tools', '--naming', 'priority', '--priority', 'time, fetch']).aggregate?.naming).toEqual({
      strategy: 'priority',
      order: ['time', 'fetch'],
    });
    const naming = file(
      'naming.yaml',
      'overrides:\n  time:\n    tools:\n      now: {name: clock}\n    prompts:\n      noisy: {hidden: true}\n',
    );
    expect(serve(['tools', '--naming', 'manual', '--naming-config', naming]).aggregate?.naming).toEqual({
      strategy: 'manual',
      overrides: { time: { tools: { now: { name: 'clock' } }, prompts: { noisy: { hidden: true } } } },
    });
  });

  it('refuses naming flags that do not fit, naming the flag', () => {
    expect(refusal(['tools', '--naming', 'priority', '--separator', '.'])).toBe(
      '--separator only applies to --naming prefix or manual (the naming strategy is priority)',
    );
    expect(refusal(['tools', '--priority', 'a'])).toBe(
      '--priority only applies to --naming priority (the naming strategy is prefix)',
    );
    expect(refusal(['tools', '--naming', 'manual'])).toMatch(/^--naming manual needs --naming-config FILE/);
    expect(refusal(['tools', '--naming-config', 'x.yaml'])).toMatch(
      /^--naming-config only applies to --naming manual/,
    );
    expect(refusal(['tools', '--separator', 'a b'])).toBe(
      '--separator: must be 1-8 of the characters A-Z a-z 0-9 _ . -',
    );
    expect(refusal(['tools', '--naming', 'priority', '--priority', 'a,,b'])).toMatch(/^--priority: expected/);
    expect(refusal(['tools', '--naming', 'alphabetic'])).toMatch(
      /option '--naming <strategy>' argument 'alphabetic' is invalid/,
    );
    const bad = file('bad-naming.yaml', 'overrides:\n  time:\n    tools:\n      now: {rename: clock}\n');
    expect(refusal(['tools', '--naming', 'manual', '--naming-config', bad])).toMatch(
      /^--naming-config .*bad-naming\.yaml: unknown field overrides\.time\.tools\.now\.rename/,
    );
    expect(refusal(['tools', '--naming', 'manual', '--naming-config', join(dir, 'missing.yaml')])).toMatch(
      /^--naming-config: cannot read /,
    );
    expect(refusal(['bad/group'])).toMatch(/group name/);
  });

  it('exports and reads back the same RunConfig (moat export, moat run --from-config)', () => {
    const config = serve(['tools', '--naming', 'priority', '--priority', 'b,a', '--tools', 'x']);
    const saved = { ...config, port: 41234, auto_ports: ['port' as const] };
    const exported = exportedRunConfig(saved);
    expect(parseRunConfig(JSON.parse(serializeRunConfig(exported)), 'exported.json')).toEqual(config);
  });
});

describe('a RunConfig with aggregate', () => {
  const base = serve(['tools']);
  it.each([
    [
      { image: 'ghcr.io/x/y:1' },
      'field image: must be empty with aggregate (an aggregate serves a group, not an image)',
    ],
    [{ remote_url: 'https://x.example.com/mcp' }, 'field remote_url: cannot be set with aggregate'],
    [{ transport: 'stdio' }, 'field transport: must be streamable-http with aggregate'],
    [{ protocol_target: 'npx://x' }, 'field protocol_target: cannot be set with aggregate'],
    [{ volumes: ['/a:/b'] }, 'field volumes: cannot be set with aggregate'],
    [{ stateless: true }, 'field stateless: cannot be set with aggregate'],
    [{ permission_profile: { name: 'none' } }, 'field permission_profile: must be null with aggregate'],
  ])('refuses %o next to it, naming the field', (extra, message) => {
    expect(() => parseRunConfig({ ...base, ...extra }, 'agg.json')).toThrow(message);
  });
});
