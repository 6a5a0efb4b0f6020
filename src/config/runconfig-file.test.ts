import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fsBuildContext } from '../cli/run-build-context.js';
import { buildRunConfig } from '../cli/run-build.js';
import { parseRunArgv } from '../cli/run-command.js';
import {
  parseRunConfig,
  readRunConfigFile,
  serializeRunConfig,
  writeRunConfigFile,
} from './runconfig-file.js';
import { runConfigSchema } from './runconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'moat-runconfig-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** ToolHive's example RunConfig (reference toolhive-run.md §1.6): `thv run fetch`. */
const TOOLHIVE_EXAMPLE = {
  schema_version: 'v0.1.0',
  image: 'ghcr.io/stackloklabs/gofetch/server:1.0.1',
  registry_server_name: 'io.github.stacklok/fetch',
  name: 'fetch',
  container_name: 'fetch',
  base_name: 'fetch',
  transport: 'streamable-http',
  host: '127.0.0.1',
  port: 23456,
  target_port: 41234,
  target_host: '127.0.0.1',
  permission_profile: {
    network: { outbound: { allow_host: ['.example.com'], allow_port: [443] } },
  },
  env_vars: { MCP_TRANSPORT: 'streamable-http', MCP_PORT: '41234', FASTMCP_PORT: '41234' },
  container_labels: {
    toolhive: 'true',
    'toolhive-name': 'fetch',
    'toolhive-basename': 'fetch',
    'toolhive-transport': 'streamable-http',
    'toolhive-port': '23456',
  },
  isolate_network: true,
  proxy_mode: 'streamable-http',
  group: 'default',
  ignore_config: { LoadGlobal: true, PrintOverlays: false },
  middleware_configs: [
    { type: 'auth', parameters: {} },
    { type: 'mcp-parser', parameters: {} },
    { type: 'usagemetrics', parameters: {} },
    { type: 'recovery', parameters: null },
  ],
};

describe('RunConfig files', () => {
  it('round trip: flags → RunConfig → file → RunConfig', async () => {
    const envFile = join(dir, 'app.env');
    writeFileSync(envFile, 'A=1\n');
    const parsed = parseRunArgv([
      '--name',
      'fetch',
      '--group',
      'team',
      '--transport',
      'streamable-http',
      '--proxy-port',
      '8080',
      '--target-port',
      '9090',
      '-e',
      'LOG=debug',
      '--env-file',
      envFile,
      '-l',
      'tier=gold',
      '-p',
      '8081:81',
      '-v',
      `${dir}:/data:ro`,
      '--secret',
      'gh,target=GITHUB_TOKEN',
      '--tools',
      'fetch',
      '--session-ttl',
      '30m',
      '--otel-endpoint',
      'https://otel.example.com',
      '--oidc-issuer',
      'https://idp.example.com',
      '--oidc-audience',
      'moat',
      'ghcr.io/acme/fetch:1.2',
      '--',
      '--verbose',
    ]);
    const { config } = buildRunConfig(
      parsed,
      fsBuildContext(() => undefined, dir),
    );
    const path = join(dir, 'fetch.json');
    await writeRunConfigFile(path, config);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const loaded = await readRunConfigFile(path);
    expect(loaded).toEqual(config);
    // The supervisor reads saved configs without the schema: the file must hold exactly the RunConfig.
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(config);
    expect(loaded).toMatchObject({
      name: 'fetch',
      port: 8080,
      target_port: 9090,
      cmd_args: ['--verbose'],
      session_ttl: '30m0s',
      secrets: ['gh,target=GITHUB_TOKEN'],
      env_file: envFile,
      oidc_config: { Issuer: 'https://idp.example.com', Audience: 'moat' },
    });
  });

  it("writes keys in ToolHive's order, pretty-printed with two spaces", () => {
    const config = runConfigSchema.parse({
      group: 'default',
      port: 1,
      name: 'a',
      image: 'img',
      transport: 'stdio',
      host: '127.0.0.1',
      max_request_body_size: 10,
    });
    const text = serializeRunConfig(config);
    expect(Object.keys(JSON.parse(text) as object)).toEqual([
      'schema_version',
      'image',
      'name',
      'transport',
      'host',
      'port',
      'permission_profile',
      'group',
      'max_request_body_size',
    ]);
    expect(text).toMatch(/^\{\n {2}"schema_version": "v0.1.0",\n/);
    expect(text.endsWith('}\n')).toBe(true);
  });

  it("loads ToolHive's example RunConfig", async () => {
    const path = join(dir, 'toolhive.json');
    writeFileSync(path, JSON.stringify(TOOLHIVE_EXAMPLE, null, 2));
    const config = await readRunConfigFile(path);
    expect(config).toMatchObject({
      name: 'fetch',
      port: 23456,
      registry_server_name: 'io.github.stacklok/fetch',
    });
    expect(JSON.parse(serializeRunConfig(config))).toEqual(TOOLHIVE_EXAMPLE);
    expect(JSON.parse(serializeRunConfig(config))).toEqual(config);
  });

  it('reports a bad field by its path and what is allowed', () => {
    expect(() =>
      parseRunConfig(
        { ...TOOLHIVE_EXAMPLE, transport: 'tcp', remote_auth_config: { timeout: 'soon' } },
        'f.json',
      ),
    ).toThrow(
      'f.json: invalid run configuration: field remote_auth_config.timeout: Invalid input: expected number, ' +
        'received string; field transport: Invalid option: expected one of "stdio"|"sse"|"streamable-http"',
    );
    expect(() => parseRunConfig({ ...TOOLHIVE_EXAMPLE, port: 70000 }, 'f.json')).toThrow(
      /field port: .*65535/,
    );
  });

  it('names unknown fields instead of dropping them', () => {
    expect(() => parseRunConfig({ ...TOOLHIVE_EXAMPLE, rate_limit_config: {} }, 'f.json')).toThrow(
      /unknown field rate_limit_config \(not supported by moat\)/,
    );
  });

  it('refuses a secret value where a reference belongs', () => {
    expect(() =>
      parseRunConfig({ ...TOOLHIVE_EXAMPLE, remote_auth_config: { client_secret: 'plaintext' } }, 'f.json'),
    ).toThrow(/field remote_auth_config\.client_secret: must be a secret reference NAME,target=TARGET/);
  });

  it.each([
    [{ session_ttl: '2 hours' }, /field session_ttl: expected a positive duration such as 30s, 5m or 2h0m0s/],
    [{ session_ttl: '0s' }, /field session_ttl: expected a positive duration/],
    [{ proxy_read_timeout: '30' }, /field proxy_read_timeout: expected a positive duration/],
    [
      { scaling_config: { session_redis: { address: 'r:6379', command_timeout: '0s' } } },
      /field scaling_config\.session_redis\.command_timeout: expected a positive duration/,
    ],
    [
      { remote_auth_config: { client_secret: 'S,target=oauth_secret', client_secret_file: '/s' } },
      /field remote_auth_config\.client_secret_file: cannot be set together with client_secret: give the secret or a file holding it, not both/,
    ],
    [
      { remote_auth_config: { bearer_token: 'B,target=bearer_token', bearer_token_file: '/b' } },
      /field remote_auth_config\.bearer_token_file: cannot be set together with bearer_token/,
    ],
    [
      {
        token_exchange_config: {
          token_url: 'https://sts/token',
          client_secret: 'T,target=token_exchange_client_secret',
          client_secret_file: '/t',
        },
      },
      /field token_exchange_config\.client_secret_file: cannot be set together with client_secret/,
    ],
    [
      { transport: 'stdio', remote_url: 'https://api.example.com/mcp' },
      /field transport: a remote_url server needs transport sse or streamable-http/,
    ],
  ])('refuses %j when the file is read, naming the field and what is allowed', (fields, error) => {
    expect(() => parseRunConfig({ ...TOOLHIVE_EXAMPLE, ...fields }, 'f.json')).toThrow(error);
  });

  it('keeps Go duration strings as written (ToolHive reads them)', () => {
    const config = parseRunConfig(
      { ...TOOLHIVE_EXAMPLE, session_ttl: '90m', proxy_read_timeout: '1m30s' },
      'f',
    );
    expect(config).toMatchObject({ session_ttl: '90m', proxy_read_timeout: '1m30s' });
  });

  it('migrates the old capitalised remote_auth_config keys', () => {
    const config = parseRunConfig(
      { ...TOOLHIVE_EXAMPLE, remote_auth_config: { ClientID: 'cid', Timeout: 5, CallbackPort: 8666 } },
      'f.json',
    );
    expect(config.remote_auth_config).toEqual({ client_id: 'cid', timeout: 5, callback_port: 8666 });
  });

  it('normalises proxy_mode the way ToolHive reads it', () => {
    expect(
      parseRunConfig({ ...TOOLHIVE_EXAMPLE, transport: 'sse', proxy_mode: 'streamable-http' }, 'f')
        .proxy_mode,
    ).toBe('sse');
    const { proxy_mode: _, ...stdio } = { ...TOOLHIVE_EXAMPLE, transport: 'stdio' };
    expect(parseRunConfig(stdio, 'f').proxy_mode).toBe('streamable-http');
    expect(parseRunConfig({ ...stdio, proxy_mode: 'sse' }, 'f').proxy_mode).toBe('sse');
  });

  it('defaults a missing schema_version', () => {
    const { schema_version: _, ...rest } = TOOLHIVE_EXAMPLE;
    expect(parseRunConfig(rest, 'f.json').schema_version).toBe('v0.1.0');
  });

  it('reports an unreadable or malformed file as a usage error', async () => {
    await expect(readRunConfigFile(join(dir, 'missing.json'))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/cannot read run configuration .*missing\.json/),
    });
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"name": ');
    await expect(readRunConfigFile(bad)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/bad\.json: not valid JSON/),
    });
    expect(() => parseRunConfig([], 'a.json')).toThrow(/must be a JSON object/);
  });

  it('keeps the previous file when a write is replaced', async () => {
    const path = join(dir, 'atomic.json');
    const config = runConfigSchema.parse({ image: 'i', name: 'n', transport: 'stdio', host: 'h', port: 0 });
    await writeRunConfigFile(path, config);
    await writeRunConfigFile(path, { ...config, name: 'm' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ name: 'm' });
  });
});
