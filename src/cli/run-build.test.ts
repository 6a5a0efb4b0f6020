/**
 * Table tests for every flag of `moat run` (spec §2.1): its default, a valid value and, where
 * the type allows, an invalid one, through the real parse (commander) and the RunConfig build
 * on the real file system (a temporary directory with the files the flags point at).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isMoatError } from '../util/errors.js';
import { fsBuildContext } from './run-build-context.js';
import { buildRunConfig, type BuiltRun } from './run-build.js';
import { parseRunArgv } from './run-command.js';
import type { RunFlagSpec } from './run-flag-spec.js';
import type { RunFlagName } from './run-flag-values.js';
import { RUN_FLAGS } from './run-flags.js';
import { isObject } from '../util/is-object.js';

const dir = mkdtempSync(join(tmpdir(), 'moat-run-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const envFile = file('app.env', 'A=1\n');
const envDir = join(dir, 'envdir');
mkdirSync(envDir);
file(
  'profile.json',
  JSON.stringify({
    name: 'custom',
    read: ['/etc/hosts:/hosts'],
    network: { outbound: { insecure_allow_all: true } },
  }),
);
const badProfileFile = file('bad-profile.json', JSON.stringify({ name: 'x', nope: 1 }));
file('tools.json', JSON.stringify({ toolsOverride: { fetch: { name: 'web_fetch' } } }));
const badToolsFile = file('bad-tools.json', JSON.stringify({ toolsOverride: { fetch: {} } }));
const hooksFile = file(
  'hooks.yaml',
  [
    'validating:',
    '  - name: policy',
    '    url: https://hooks.example.com/validate',
    '    failure_policy: fail',
    '    timeout: 5s',
    'mutating:',
    '  - name: rewrite',
    '    url: https://hooks.example.com/mutate',
  ].join('\n'),
);
const badHooksFile = file(
  'bad-hooks.yaml',
  'validating:\n  - name: plain\n    url: http://hooks.example.com/v\n',
);
const caFile = file('ca.pem', '-----BEGIN CERTIFICATE-----\n');
const tokenFile = file('token.txt', 'token\n');
const authzFile = file('authz.json', '{}');
const guardrailFile = file('guardrails.yaml', 'to_client: redact\n');
const auditFile = file('audit.json', '{}');
const missing = join(dir, 'missing.file');

const IMAGE = 'ghcr.io/acme/server:1';
const REMOTE = 'https://api.example.com/mcp';
const UVX = 'uvx://mcp-server-fetch';
const NPX = 'npx://@modelcontextprotocol/server-everything';

interface Built extends BuiltRun {
  warnings: string[];
  flags: Record<string, unknown>;
}

function build(args: readonly string[], target: string = IMAGE): Built {
  const warnings: string[] = [];
  const parsed = parseRunArgv([...args, target]);
  const built = buildRunConfig(
    parsed,
    fsBuildContext((m) => warnings.push(m), dir),
  );
  return { ...built, warnings, flags: parsed.flags };
}

/** A value by dotted path: `config.x.y`, `flags.x`, `warnings`, `secrets`. */
function pick(built: Built, path: string): unknown {
  const [root, ...rest] = path.split('.');
  let value: unknown =
    root === 'flags'
      ? built.flags
      : root === 'warnings'
        ? built.warnings
        : root === 'secretsToStore'
          ? built.secretsToStore
          : built.config;
  const keys = root === 'flags' || root === 'warnings' || root === 'secretsToStore' ? rest : [root, ...rest];
  for (const key of keys) value = (value as Record<string, unknown> | undefined)?.[key as string];
  return value;
}

interface FlagCase {
  flag: RunFlagName;
  /** Target for every run of this case (default: an image). */
  target?: string;
  /** Arguments every run of this case needs besides the flag (e.g. --transport stdio). */
  with?: string[];
  /** Expected values without the flag. */
  defaults: Record<string, unknown>;
  valid: string[];
  expect: Record<string, unknown>;
  invalid?: [string[], RegExp][];
}

const U = undefined;

const CASES: FlagCase[] = [
  // Workload identity, process and transport
  {
    flag: 'name',
    defaults: { name: 'acme-server', container_name: 'acme-server', base_name: 'acme-server' },
    valid: ['--name', 'fetch-1'],
    expect: { name: 'fetch-1', container_name: 'fetch-1', base_name: 'fetch-1', warnings: [] },
  },
  {
    flag: 'group',
    defaults: { group: 'default' },
    valid: ['--group', 'team-a'],
    expect: { group: 'team-a' },
    invalid: [[['--group', 'a/b'], /group name \(--group\)/]],
  },
  {
    flag: 'foreground',
    defaults: { 'flags.foreground': false },
    valid: ['-f'],
    expect: { 'flags.foreground': true },
  },
  {
    flag: 'skip-remote-check',
    target: REMOTE,
    defaults: { 'flags.skipRemoteCheck': false },
    valid: ['--skip-remote-check'],
    expect: { 'flags.skipRemoteCheck': true },
  },
  {
    flag: 'rate-limit',
    defaults: { rate_limit: U },
    valid: ['--rate-limit', '120', '--rate-limit-fail-open'],
    expect: { rate_limit: { per_principal: { requests_per_minute: 120 }, on_store_failure: 'allow' } },
    invalid: [[['--rate-limit', '-1'], /rate-limit/]],
  },
  {
    flag: 'tool-rate-limit',
    defaults: { rate_limit: U },
    valid: ['--tool-rate-limit', '10'],
    expect: { rate_limit: { per_tool: { requests_per_minute: 10 } } },
  },
  {
    flag: 'rate-limit-fail-open',
    with: ['--rate-limit', '5'],
    defaults: { 'rate_limit.on_store_failure': U },
    valid: ['--rate-limit-fail-open'],
    expect: { 'rate_limit.on_store_failure': 'allow' },
  },
  {
    flag: 'tool-pinning',
    defaults: { tool_pinning: { mode: 'warn' } },
    valid: ['--tool-pinning', 'enforce'],
    expect: { tool_pinning: { mode: 'enforce' } },
    invalid: [[['--tool-pinning', 'strict'], /tool-pinning/]],
  },
  {
    flag: 'tool-search',
    defaults: { tool_search: U },
    valid: ['--tool-search'],
    expect: { tool_search: true },
  },
  {
    flag: 'allow-metadata-address',
    target: REMOTE,
    defaults: { 'flags.allowMetadataAddress': false },
    valid: ['--allow-metadata-address'],
    expect: { 'flags.allowMetadataAddress': true },
  },
  {
    flag: 'from-config',
    defaults: { 'flags.fromConfig': U },
    valid: ['--from-config', 'exported.json'],
    expect: { 'flags.fromConfig': 'exported.json' },
  },
  {
    flag: 'transport',
    defaults: { transport: 'streamable-http', target_port: 0, target_host: '127.0.0.1' },
    valid: ['--transport', 'stdio'],
    expect: { transport: 'stdio', target_port: U, target_host: U, proxy_mode: 'streamable-http' },
    invalid: [[['--transport', 'tcp'], /--transport.*Allowed choices are sse, streamable-http, stdio/]],
  },
  {
    flag: 'proxy-mode',
    with: ['--transport', 'stdio'],
    defaults: { proxy_mode: 'streamable-http', warnings: [] },
    valid: ['--proxy-mode', 'sse'],
    expect: { proxy_mode: 'sse', 'warnings.0': expect.stringMatching(/'sse' proxy mode is deprecated/) },
    invalid: [[['--proxy-mode', 'ws'], /--proxy-mode.*Allowed choices are streamable-http, sse/]],
  },
  {
    flag: 'proxy-port',
    defaults: { port: 0 },
    valid: ['--proxy-port', '8080'],
    expect: { port: 8080 },
    invalid: [
      [['--proxy-port', '0'], /--proxy-port.*from 1 to 65535/],
      [['--proxy-port', '65536'], /--proxy-port.*from 1 to 65535/],
    ],
  },
  {
    flag: 'host',
    defaults: { host: '127.0.0.1' },
    valid: ['--host', 'localhost'],
    expect: { host: 'localhost' },
    invalid: [
      [['--host', '::1'], /--host: IPv6 addresses are not supported/],
      [['--host', 'bad host'], /--host: .*IPv4 address or a hostname/],
    ],
  },
  {
    flag: 'target-host',
    defaults: { target_host: '127.0.0.1' },
    valid: ['--target-host', '0.0.0.0'],
    expect: { target_host: '0.0.0.0' },
    invalid: [
      [['--target-host', 'fe80::1'], /--target-host: IPv6/],
      [
        ['--transport', 'stdio', '--target-host', 'x'],
        /--target-host only applies to sse or streamable-http/,
      ],
    ],
  },
  {
    flag: 'target-port',
    defaults: { target_port: 0 },
    valid: ['--target-port', '9000'],
    expect: { target_port: 9000 },
    invalid: [
      [['--target-port', '0'], /--target-port.*from 1 to 65535/],
      [['--transport', 'stdio', '--target-port', '9000'], /--target-port only applies/],
    ],
  },
  {
    flag: 'publish',
    defaults: { publish: U },
    valid: ['-p', '8080:80', '--publish', '9090:90'],
    expect: { publish: ['8080:80', '9090:90'] },
    invalid: [[['-p', '80'], /-p 80: expected hostPort:containerPort/]],
  },
  {
    flag: 'label',
    defaults: { container_labels: U },
    valid: ['-l', 'team=core', '--label', 'tier=gold'],
    expect: { container_labels: { team: 'core', tier: 'gold' } },
    invalid: [
      [['-l', 'novalue'], /--label: invalid value "novalue": expected key=value/],
      [['-l', 'bad key=1'], /label key "bad key"/],
    ],
  },
  {
    flag: 'volume',
    defaults: { volumes: U },
    valid: ['-v', `${dir}:/data:ro`, '--volume', 'envdir:/env'],
    expect: { volumes: [`${dir}:/data:ro`, `${envDir}:/env`] },
    invalid: [
      [['-v', `${missing}:/x`], /--volume .*host path does not exist/],
      [['-v', 'only-one-part'], /expected host-path:container-path\[:ro\]/],
    ],
  },
  {
    flag: 'env',
    defaults: { env_vars: U },
    valid: ['-e', 'A=1', '--env', 'B=x=y', '-e', 'EMPTY='],
    expect: { env_vars: { A: '1', B: 'x=y', EMPTY: '' } },
    invalid: [
      [['-e', 'NOVALUE'], /--env: invalid value "NOVALUE": expected KEY=VALUE/],
      [['-e', '=x'], /--env: invalid value "=x"/],
    ],
  },
  {
    flag: 'env-file',
    defaults: { env_file: U },
    valid: ['--env-file', 'app.env'],
    expect: { env_file: envFile },
    invalid: [[['--env-file', missing], /--env-file: file not found/]],
  },
  {
    flag: 'env-file-dir',
    defaults: { env_file_dir: U },
    valid: ['--env-file-dir', envDir],
    expect: { env_file_dir: envDir },
    invalid: [[['--env-file-dir', envFile], /--env-file-dir: directory not found/]],
  },
  {
    flag: 'secret',
    defaults: { secrets: U },
    valid: ['--secret', 'gh,target=GITHUB_TOKEN'],
    expect: { secrets: ['gh,target=GITHUB_TOKEN'] },
    invalid: [[['--secret', 'gh'], /--secret: invalid value "gh": expected NAME,target=TARGET/]],
  },
  {
    flag: 'stateless',
    defaults: { stateless: U },
    valid: ['--stateless'],
    expect: { stateless: true },
  },
  {
    flag: 'ignore-globally',
    defaults: { 'ignore_config.LoadGlobal': true },
    valid: ['--ignore-globally=false'],
    expect: { 'ignore_config.LoadGlobal': false },
  },
  {
    flag: 'print-resolved-overlays',
    defaults: { 'ignore_config.PrintOverlays': false },
    valid: ['--print-resolved-overlays'],
    expect: { 'ignore_config.PrintOverlays': true },
  },
  {
    flag: 'debug',
    defaults: { debug: U },
    valid: ['--debug'],
    expect: { debug: true },
  },

  // Isolation and permissions
  {
    flag: 'network',
    defaults: { 'permission_profile.network.mode': U, isolate_network: true },
    valid: ['--network', 'host'],
    expect: {
      'permission_profile.network.mode': 'host',
      isolate_network: false,
      'warnings.0': expect.stringMatching(/isolation is off: it needs bridge networking, and --network host/),
    },
    invalid: [
      [
        ['--network', 'host', '--isolate-network'],
        /--isolate-network cannot be enforced with --network host/,
      ],
    ],
  },
  {
    flag: 'isolate-network',
    defaults: { isolate_network: true },
    valid: ['--isolate-network=false'],
    expect: { isolate_network: false },
    invalid: [
      [
        ['--isolate-network=false', '--permission-profile', 'none'],
        /--isolate-network=false conflicts with the permission profile "none", which restricts outbound traffic/,
      ],
    ],
  },
  {
    flag: 'allow-docker-gateway',
    defaults: { allow_docker_gateway: U },
    valid: ['--allow-docker-gateway'],
    expect: { allow_docker_gateway: true },
    invalid: [[['--allow-docker-gateway', '--isolate-network=false'], /--allow-docker-gateway only applies/]],
  },
  {
    flag: 'permission-profile',
    defaults: {
      permission_profile_name_or_path: U,
      permission_profile: {
        name: 'network',
        network: { outbound: { insecure_allow_all: true }, inbound: {} },
      },
    },
    valid: ['--permission-profile', 'profile.json'],
    expect: {
      permission_profile_name_or_path: 'profile.json',
      'permission_profile.name': 'custom',
      'permission_profile.read': ['/etc/hosts:/hosts'],
    },
    invalid: [
      [
        ['--permission-profile', badProfileFile],
        /invalid permission profile --permission-profile .*bad-profile\.json: .*nope/,
      ],
      [['--permission-profile', missing], /--permission-profile: cannot read/],
    ],
  },
  {
    flag: 'image-verification',
    defaults: { image_verification: 'warn' },
    valid: ['--image-verification', 'enabled'],
    expect: { image_verification: 'enabled' },
    invalid: [[['--image-verification', 'strict'], /Allowed choices are warn, enabled, disabled/]],
  },

  // Build-time options
  {
    flag: 'build-with',
    target: UVX,
    defaults: { runtime_config: {}, protocol_target: UVX, image: UVX },
    valid: ['--build-with', 'httpx>=0.27', '--build-with', 'rich'],
    expect: { 'runtime_config.build_with': ['httpx>=0.27', 'rich'] },
  },
  {
    flag: 'ca-cert',
    target: NPX,
    defaults: { 'runtime_config.ca_cert_path': U },
    valid: ['--ca-cert', 'ca.pem'],
    expect: { 'runtime_config.ca_cert_path': caFile },
    invalid: [[['--ca-cert', missing], /--ca-cert: file not found/]],
  },
  {
    flag: 'runtime-add-package',
    target: NPX,
    defaults: { 'runtime_config.additional_packages': U },
    valid: ['--runtime-add-package', 'git', '--runtime-add-package', 'curl'],
    expect: { 'runtime_config.additional_packages': ['git', 'curl'] },
  },
  {
    flag: 'runtime-image',
    target: UVX,
    defaults: { 'runtime_config.builder_image': U },
    valid: ['--runtime-image', 'python:3.13-slim'],
    expect: { 'runtime_config.builder_image': 'python:3.13-slim' },
  },
  {
    flag: 'thv-ca-bundle',
    defaults: { thv_ca_bundle: U, oidc_config: U },
    valid: ['--thv-ca-bundle', caFile, '--oidc-issuer', 'https://idp.example.com'],
    expect: { thv_ca_bundle: caFile, 'oidc_config.CACertPath': caFile },
    invalid: [[['--thv-ca-bundle', missing], /--thv-ca-bundle: file not found/]],
  },

  // HTTP proxy behavior
  {
    flag: 'allowed-origins',
    defaults: { allowed_origins: U },
    valid: ['--allowed-origins', 'https://app.example.com', '--allowed-origins', 'http://localhost:3000'],
    expect: { allowed_origins: ['https://app.example.com', 'http://localhost:3000'] },
    invalid: [
      [['--allowed-origins', 'https://app.example.com/path'], /--allowed-origins: invalid value.*origin/],
    ],
  },
  {
    flag: 'endpoint-prefix',
    defaults: { endpoint_prefix: U },
    valid: ['--endpoint-prefix', '/mcp-a'],
    expect: { endpoint_prefix: '/mcp-a' },
    invalid: [[['--endpoint-prefix', 'mcp'], /--endpoint-prefix must start with '\/'/]],
  },
  {
    flag: 'max-request-body-size',
    defaults: { max_request_body_size: U },
    valid: ['--max-request-body-size', '1048576'],
    expect: { max_request_body_size: 1048576 },
    invalid: [[['--max-request-body-size', '-1'], /--max-request-body-size.*at least 0/]],
  },
  {
    flag: 'proxy-read-timeout',
    defaults: { proxy_read_timeout: U },
    valid: ['--proxy-read-timeout', '1m'],
    expect: { proxy_read_timeout: '1m0s' },
    invalid: [[['--proxy-read-timeout', '-5s'], /--proxy-read-timeout.*duration such as 30s/]],
  },
  {
    flag: 'upstream-timeout',
    defaults: { upstream_timeout: U },
    valid: ['--upstream-timeout', '90s'],
    expect: { upstream_timeout: '1m30s' },
    invalid: [[['--upstream-timeout', '-5s'], /--upstream-timeout.*duration such as 30s/]],
  },
  {
    flag: 'request-state-ttl',
    defaults: { request_state_ttl: U },
    valid: ['--request-state-ttl', '2m'],
    expect: { request_state_ttl: '2m0s' },
    invalid: [[['--request-state-ttl', 'soon'], /--request-state-ttl.*duration/]],
  },
  {
    flag: 'session-ttl',
    defaults: { session_ttl: U },
    valid: ['--session-ttl', '2m30s'],
    expect: { session_ttl: '2m30s' },
    invalid: [[['--session-ttl', 'forever'], /--session-ttl.*duration/]],
  },
  {
    flag: 'strict-protocol-validation',
    defaults: { strict_protocol_validation: U },
    valid: ['--strict-protocol-validation'],
    expect: { strict_protocol_validation: true },
  },
  {
    flag: 'trust-proxy-headers',
    defaults: { trust_proxy_headers: U },
    valid: ['--trust-proxy-headers'],
    expect: { trust_proxy_headers: true },
  },

  // Tools
  {
    flag: 'tools',
    defaults: { tools_filter: U },
    valid: ['--tools', 'fetch,search', '--tools', 'get_me'],
    expect: { tools_filter: ['fetch', 'search', 'get_me'] },
  },
  {
    flag: 'tools-override',
    defaults: { tools_override: U },
    valid: ['--tools-override', 'tools.json'],
    expect: { tools_override: { fetch: { name: 'web_fetch' } } },
    invalid: [
      [
        ['--tools-override', badToolsFile],
        /--tools-override .*bad-tools\.json: field toolsOverride\.fetch: a tool override needs a name or a description/,
      ],
      [['--tools-override', missing], /--tools-override: cannot read/],
    ],
  },

  // Audit, authorization and webhook files
  {
    flag: 'enable-audit',
    defaults: { audit_config: U },
    valid: ['--enable-audit'],
    expect: { audit_config: {} },
  },
  {
    flag: 'audit-config',
    defaults: { audit_config_path: U },
    valid: ['--audit-config', 'audit.json'],
    expect: { audit_config_path: auditFile, audit_config: U },
    invalid: [[['--audit-config', missing], /--audit-config: file not found/]],
  },
  {
    flag: 'authz-config',
    defaults: { authz_config_path: U },
    valid: ['--authz-config', authzFile],
    expect: { authz_config_path: authzFile },
    invalid: [[['--authz-config', missing], /--authz-config: file not found/]],
  },
  {
    flag: 'guardrail-config',
    defaults: { guardrail_config_path: U },
    valid: ['--guardrail-config', guardrailFile],
    expect: { guardrail_config_path: guardrailFile },
    invalid: [[['--guardrail-config', missing], /--guardrail-config: file not found/]],
  },
  {
    flag: 'authz-argument-mapping',
    defaults: { authz_argument_mapping: U },
    valid: ['--authz-argument-mapping', 'lossy'],
    expect: { authz_argument_mapping: 'lossy' },
    invalid: [[['--authz-argument-mapping', 'drop'], /authz-argument-mapping/]],
  },
  {
    flag: 'webhook-config',
    defaults: { validating_webhooks: U, mutating_webhooks: U },
    valid: ['--webhook-config', hooksFile],
    expect: {
      'validating_webhooks.0': {
        name: 'policy',
        url: 'https://hooks.example.com/validate',
        failure_policy: 'fail',
        timeout: 5_000_000_000,
      },
      'mutating_webhooks.0': {
        name: 'rewrite',
        url: 'https://hooks.example.com/mutate',
        timeout: 10_000_000_000,
      },
    },
    invalid: [
      [
        ['--webhook-config', badHooksFile],
        /--webhook-config .*bad-hooks\.yaml: field validating\[0\]\.url: url must use https/,
      ],
    ],
  },

  // Incoming-client OIDC validation
  {
    flag: 'oidc-issuer',
    defaults: { oidc_config: U },
    valid: ['--oidc-issuer', 'https://idp.example.com'],
    expect: { oidc_config: { Issuer: 'https://idp.example.com' } },
    invalid: [
      [['--oidc-issuer', 'http://idp.example.com'], /--oidc-issuer must use https/],
      [['--oidc-issuer', 'idp'], /--oidc-issuer: invalid value "idp": expected an http/],
    ],
  },
  {
    flag: 'oidc-audience',
    defaults: { oidc_config: U },
    valid: ['--oidc-audience', 'moat'],
    expect: { 'oidc_config.Audience': 'moat' },
  },
  {
    flag: 'oidc-client-id',
    defaults: { oidc_config: U },
    valid: ['--oidc-client-id', 'client-1'],
    expect: { 'oidc_config.ClientID': 'client-1' },
  },
  {
    flag: 'oidc-client-secret',
    defaults: { oidc_config: U, secretsToStore: [] },
    valid: ['--oidc-client-secret', 's3cr3t'],
    expect: {
      'oidc_config.ClientSecret': '__moat_workloads_OIDC_CLIENT_SECRET_acme-server,target=oidc_client_secret',
      secretsToStore: [{ kind: 'oidcClientSecret', value: 's3cr3t' }],
    },
  },
  {
    flag: 'oidc-introspection-url',
    defaults: { oidc_config: U },
    valid: ['--oidc-introspection-url', 'https://idp.example.com/introspect'],
    expect: { 'oidc_config.IntrospectionURL': 'https://idp.example.com/introspect' },
    invalid: [[['--oidc-introspection-url', 'ftp://x'], /--oidc-introspection-url: invalid value/]],
  },
  {
    flag: 'oidc-jwks-url',
    defaults: { oidc_config: U },
    valid: ['--oidc-jwks-url', 'https://idp.example.com/jwks'],
    expect: { 'oidc_config.JWKSURL': 'https://idp.example.com/jwks' },
    invalid: [[['--oidc-jwks-url', 'jwks'], /--oidc-jwks-url: invalid value/]],
  },
  {
    flag: 'oidc-scopes',
    defaults: { oidc_config: U },
    valid: ['--oidc-scopes', 'openid,profile', '--oidc-scopes', 'email'],
    expect: { 'oidc_config.Scopes': ['openid', 'profile', 'email'] },
  },
  {
    flag: 'oidc-insecure-allow-http',
    defaults: { oidc_config: U },
    valid: ['--oidc-insecure-allow-http', '--oidc-issuer', 'http://127.0.0.1:8080'],
    expect: { 'oidc_config.InsecureAllowHTTP': true, 'oidc_config.Issuer': 'http://127.0.0.1:8080' },
  },
  {
    flag: 'jwks-allow-private-ip',
    defaults: { oidc_config: U },
    valid: ['--jwks-allow-private-ip'],
    expect: { 'oidc_config.AllowPrivateIP': true },
  },
  {
    flag: 'jwks-auth-token-file',
    defaults: { jwks_auth_token_file: U },
    valid: ['--jwks-auth-token-file', tokenFile, '--oidc-jwks-url', 'https://idp.example.com/jwks'],
    expect: { jwks_auth_token_file: tokenFile, 'oidc_config.AuthTokenFile': tokenFile },
    invalid: [[['--jwks-auth-token-file', missing], /--jwks-auth-token-file: file not found/]],
  },
  {
    flag: 'resource-url',
    defaults: { oidc_config: U },
    valid: ['--resource-url', 'https://mcp.example.com/mcp'],
    expect: { oidc_config: { ResourceURL: 'https://mcp.example.com/mcp' } },
    invalid: [[['--resource-url', 'mcp'], /--resource-url: invalid value/]],
  },

  // Authentication to a remote MCP server
  {
    flag: 'remote-auth',
    target: REMOTE,
    defaults: { 'remote_auth_config.enabled': U, remote_url: REMOTE, image: REMOTE, name: 'example' },
    valid: ['--remote-auth'],
    expect: { 'remote_auth_config.enabled': true },
  },
  {
    flag: 'remote-auth-issuer',
    target: REMOTE,
    defaults: { 'remote_auth_config.issuer': U },
    valid: ['--remote-auth-issuer', 'https://auth.example.com'],
    expect: { 'remote_auth_config.issuer': 'https://auth.example.com' },
    invalid: [
      [
        [
          '--remote-auth-issuer',
          'https://a.example.com',
          '--remote-auth-token-url',
          'https://a.example.com/t',
        ],
        /--remote-auth-issuer and --remote-auth-token-url cannot be used together/,
      ],
    ],
  },
  {
    flag: 'remote-auth-authorize-url',
    target: REMOTE,
    defaults: { 'remote_auth_config.authorize_url': U },
    valid: ['--remote-auth-authorize-url', 'https://auth.example.com/authorize'],
    expect: { 'remote_auth_config.authorize_url': 'https://auth.example.com/authorize' },
    invalid: [
      [
        [
          '--remote-auth-authorize-url',
          'https://a.example.com/a',
          '--remote-auth-issuer',
          'https://a.example.com',
        ],
        /--remote-auth-issuer and --remote-auth-authorize-url cannot be used together/,
      ],
    ],
  },
  {
    flag: 'remote-auth-token-url',
    target: REMOTE,
    defaults: { 'remote_auth_config.token_url': U },
    valid: ['--remote-auth-token-url', 'https://auth.example.com/token'],
    expect: { 'remote_auth_config.token_url': 'https://auth.example.com/token' },
    invalid: [[['--remote-auth-token-url', 'token'], /--remote-auth-token-url: invalid value/]],
  },
  {
    flag: 'remote-auth-client-id',
    target: REMOTE,
    defaults: { 'remote_auth_config.client_id': U },
    valid: ['--remote-auth-client-id', 'cid'],
    expect: { 'remote_auth_config.client_id': 'cid' },
  },
  {
    flag: 'remote-auth-client-metadata-url',
    target: REMOTE,
    defaults: { 'remote_auth_config.client_metadata_url': U },
    valid: ['--remote-auth-client-metadata-url', 'https://client.example/moat.json'],
    expect: { 'remote_auth_config.client_metadata_url': 'https://client.example/moat.json' },
    invalid: [
      [
        ['--remote-auth-client-metadata-url', 'http://client.example/moat.json'],
        /--remote-auth-client-metadata-url: invalid value "http:\/\/client\.example\/moat\.json": it must be an https URL/,
      ],
      [['--remote-auth-client-metadata-url', 'https://client.example/m#x'], /must not contain a fragment/],
      [
        ['--remote-auth-client-metadata-url', 'https://client.example'],
        /must contain a path to the document/,
      ],
    ],
  },
  {
    flag: 'remote-auth-client-secret',
    target: REMOTE,
    defaults: { 'remote_auth_config.client_secret': U },
    valid: ['--remote-auth-client-secret', 'csecret'],
    expect: {
      'remote_auth_config.client_secret': '__moat_workloads_OAUTH_CLIENT_SECRET_example,target=oauth_secret',
      secretsToStore: [{ kind: 'remoteClientSecret', value: 'csecret' }],
    },
    invalid: [
      [
        ['--remote-auth-client-secret', 'x', '--remote-auth-client-secret-file', tokenFile],
        /--remote-auth-client-secret and --remote-auth-client-secret-file cannot be used together/,
      ],
    ],
  },
  {
    flag: 'remote-auth-client-secret-file',
    target: REMOTE,
    defaults: { 'remote_auth_config.client_secret_file': U },
    valid: ['--remote-auth-client-secret-file', 'token.txt'],
    expect: { 'remote_auth_config.client_secret_file': tokenFile },
    invalid: [[['--remote-auth-client-secret-file', missing], /file not found/]],
  },
  {
    flag: 'remote-auth-bearer-token',
    target: REMOTE,
    defaults: { 'remote_auth_config.bearer_token': U },
    valid: ['--remote-auth-bearer-token', 'tok'],
    expect: {
      'remote_auth_config.bearer_token': '__moat_workloads_BEARER_TOKEN_example,target=bearer_token',
      secretsToStore: [{ kind: 'bearerToken', value: 'tok' }],
    },
    invalid: [
      [
        ['--remote-auth-bearer-token', 'x', '--remote-auth-bearer-token-file', tokenFile],
        /--remote-auth-bearer-token and --remote-auth-bearer-token-file cannot be used together/,
      ],
    ],
  },
  {
    flag: 'remote-auth-bearer-token-file',
    target: REMOTE,
    defaults: { 'remote_auth_config.bearer_token_file': U },
    valid: ['--remote-auth-bearer-token-file', tokenFile],
    expect: { 'remote_auth_config.bearer_token_file': tokenFile },
    invalid: [[['--remote-auth-bearer-token-file', missing], /file not found/]],
  },
  {
    flag: 'remote-auth-scopes',
    target: REMOTE,
    defaults: { 'remote_auth_config.scopes': U },
    valid: ['--remote-auth-scopes', 'openid,offline_access'],
    expect: { 'remote_auth_config.scopes': ['openid', 'offline_access'] },
  },
  {
    flag: 'remote-auth-scope-param-name',
    target: REMOTE,
    defaults: { 'remote_auth_config.scope_param_name': U },
    valid: ['--remote-auth-scope-param-name', 'user_scope'],
    expect: { 'remote_auth_config.scope_param_name': 'user_scope' },
  },
  {
    flag: 'remote-auth-resource',
    target: REMOTE,
    defaults: { 'remote_auth_config.resource': U },
    valid: ['--remote-auth-resource', 'https://api.example.com'],
    expect: { 'remote_auth_config.resource': 'https://api.example.com' },
    invalid: [[['--remote-auth-resource', 'https://api.example.com/#x'], /without a fragment/]],
  },
  {
    flag: 'remote-auth-callback-port',
    target: REMOTE,
    defaults: { 'remote_auth_config.callback_port': 8666 },
    valid: ['--remote-auth-callback-port', '9000'],
    expect: { 'remote_auth_config.callback_port': 9000 },
    invalid: [[['--remote-auth-callback-port', '0'], /from 1 to 65535/]],
  },
  {
    flag: 'remote-auth-skip-browser',
    target: REMOTE,
    defaults: { 'remote_auth_config.skip_browser': U },
    valid: ['--remote-auth-skip-browser'],
    expect: { 'remote_auth_config.skip_browser': true },
  },
  {
    flag: 'remote-auth-timeout',
    target: REMOTE,
    defaults: { 'remote_auth_config.timeout': 30_000_000_000 },
    valid: ['--remote-auth-timeout', '1m'],
    expect: { 'remote_auth_config.timeout': 60_000_000_000 },
    invalid: [
      [['--remote-auth-timeout', '0'], /--remote-auth-timeout: expected a duration greater than zero/],
    ],
  },
  {
    flag: 'remote-forward-headers',
    target: REMOTE,
    defaults: { header_forward: U },
    valid: ['--remote-forward-headers', 'X-Tenant=a,b', '--remote-forward-headers', 'X-Env=prod=1'],
    expect: { 'header_forward.add_plaintext_headers': { 'X-Tenant': 'a,b', 'X-Env': 'prod=1' } },
    invalid: [
      [['--remote-forward-headers', 'Host=evil'], /--remote-forward-headers: header Host cannot be set/],
      [['--remote-forward-headers', 'NoValue'], /expected Name=Value/],
    ],
  },
  {
    flag: 'remote-forward-headers-secret',
    target: REMOTE,
    defaults: { header_forward: U },
    valid: ['--remote-forward-headers-secret', 'X-Api-Key=api-key'],
    expect: { 'header_forward.add_headers_from_secret': { 'X-Api-Key': 'api-key' } },
    invalid: [
      [['--remote-forward-headers-secret', 'x-forwarded-for=s'], /header x-forwarded-for cannot be set/],
    ],
  },

  // Token exchange
  {
    flag: 'token-exchange-url',
    defaults: { token_exchange_config: U },
    valid: ['--token-exchange-url', 'https://sts.example.com/token'],
    expect: {
      token_exchange_config: {
        token_url: 'https://sts.example.com/token',
        subject_token_type: 'access_token',
        header_strategy: 'replace',
      },
    },
    invalid: [[['--token-exchange-url', 'sts'], /--token-exchange-url: invalid value/]],
  },
  {
    flag: 'token-exchange-audience',
    with: ['--token-exchange-url', 'https://sts.example.com/token'],
    defaults: { 'token_exchange_config.audience': U },
    valid: ['--token-exchange-audience', 'backend'],
    expect: { 'token_exchange_config.audience': 'backend' },
  },
  {
    flag: 'token-exchange-client-id',
    with: ['--token-exchange-url', 'https://sts.example.com/token'],
    defaults: { 'token_exchange_config.client_id': U },
    valid: ['--token-exchange-client-id', 'te-client'],
    expect: { 'token_exchange_config.client_id': 'te-client' },
  },
  {
    flag: 'token-exchange-client-secret',
    with: ['--token-exchange-url', 'https://sts.example.com/token'],
    defaults: { 'token_exchange_config.client_secret': U },
    valid: ['--token-exchange-client-secret', 'te-secret'],
    expect: {
      'token_exchange_config.client_secret':
        '__moat_workloads_TOKEN_EXCHANGE_CLIENT_SECRET_acme-server,target=token_exchange_client_secret',
      secretsToStore: [{ kind: 'tokenExchangeClientSecret', value: 'te-secret' }],
    },
    invalid: [
      [
        ['--token-exchange-client-secret', 'x', '--token-exchange-client-secret-file', tokenFile],
        /cannot be used together/,
      ],
    ],
  },
  {
    flag: 'token-exchange-client-secret-file',
    with: ['--token-exchange-url', 'https://sts.example.com/token'],
    defaults: { 'token_exchange_config.client_secret_file': U },
    valid: ['--token-exchange-client-secret-file', tokenFile],
    expect: { 'token_exchange_config.client_secret_file': tokenFile },
    invalid: [[['--token-exchange-client-secret-file', missing], /file not found/]],
  },
  {
    flag: 'token-exchange-header-name',
    with: ['--token-exchange-url', 'https://sts.example.com/token'],
    defaults: { 'token_exchange_config.header_strategy': 'replace' },
    valid: ['--token-exchange-header-name', 'X-Upstream-Token'],
    expect: {
      'token_exchange_config.header_strategy': 'custom',
      'token_exchange_config.external_token_header_name': 'X-Upstream-Token',
    },
  },
  {
    flag: 'token-exchange-scopes',
    with: ['--token-exchange-url', 'https://sts.example.com/token'],
    defaults: { 'token_exchange_config.scopes': U },
    valid: ['--token-exchange-scopes', 'read,write'],
    expect: { 'token_exchange_config.scopes': ['read', 'write'] },
  },
  {
    flag: 'token-exchange-subject-token-type',
    with: ['--token-exchange-url', 'https://sts.example.com/token'],
    defaults: { 'token_exchange_config.subject_token_type': 'access_token' },
    valid: ['--token-exchange-subject-token-type', 'id_token'],
    expect: { 'token_exchange_config.subject_token_type': 'id_token' },
    invalid: [[['--token-exchange-subject-token-type', 'jwt'], /Allowed choices are access_token, id_token/]],
  },

  // Telemetry
  {
    flag: 'otel-endpoint',
    defaults: { telemetry_config: U },
    valid: ['--otel-endpoint', 'https://otel.example.com:4318'],
    expect: {
      telemetry_config: {
        endpoint: 'https://otel.example.com:4318',
        protocol: 'http',
        serviceName: 'moat-acme-server',
        tracingEnabled: true,
        metricsEnabled: true,
        samplingRate: '0.1',
        insecure: false,
        enablePrometheusMetricsPath: false,
        metricsOnTransportPort: true,
        useLegacyAttributes: true,
      },
    },
  },
  {
    flag: 'otel-protocol',
    defaults: { telemetry_config: U },
    valid: ['--otel-protocol', 'grpc'],
    expect: { 'telemetry_config.protocol': 'grpc' },
    invalid: [[['--otel-protocol', 'http/protobuf'], /Allowed choices are http\/json, grpc/]],
  },
  {
    flag: 'otel-insecure',
    defaults: { telemetry_config: U },
    valid: ['--otel-insecure'],
    expect: { 'telemetry_config.insecure': true },
  },
  {
    flag: 'otel-headers',
    defaults: { telemetry_config: U },
    valid: ['--otel-headers', 'x-token=abc', '--otel-headers', 'x-org=1'],
    expect: { 'telemetry_config.headers': { 'x-token': 'abc', 'x-org': '1' } },
    invalid: [[['--otel-headers', 'novalue'], /--otel-headers: invalid value "novalue": expected key=value/]],
  },
  {
    flag: 'otel-service-name',
    defaults: { telemetry_config: U },
    valid: ['--otel-service-name', 'svc'],
    expect: { 'telemetry_config.serviceName': 'svc' },
  },
  {
    flag: 'otel-custom-attributes',
    defaults: { telemetry_config: U },
    valid: ['--otel-custom-attributes', 'env=prod,team=core'],
    expect: { 'telemetry_config.customAttributes': { env: 'prod', team: 'core' } },
    invalid: [[['--otel-custom-attributes', 'env'], /--otel-custom-attributes: .*key=value,key=value/]],
  },
  {
    flag: 'otel-env-vars',
    defaults: { telemetry_config: U },
    valid: ['--otel-env-vars', 'HOME,USER', '--otel-env-vars', 'LANG'],
    expect: { 'telemetry_config.environmentVariables': ['HOME', 'USER', 'LANG'] },
  },
  {
    flag: 'otel-sampling-rate',
    defaults: { telemetry_config: U },
    valid: ['--otel-sampling-rate', '0.5'],
    expect: { 'telemetry_config.samplingRate': '0.5' },
    invalid: [
      [['--otel-sampling-rate', '1.5'], /--otel-sampling-rate.*from 0 to 1/],
      [['--otel-sampling-rate', '-0.1'], /--otel-sampling-rate.*from 0 to 1/],
    ],
  },
  {
    flag: 'otel-tracing-enabled',
    defaults: { telemetry_config: U },
    valid: ['--otel-tracing-enabled=false'],
    expect: { 'telemetry_config.tracingEnabled': false },
  },
  {
    flag: 'otel-metrics-enabled',
    defaults: { telemetry_config: U },
    valid: ['--otel-metrics-enabled=false'],
    expect: { 'telemetry_config.metricsEnabled': false },
  },
  {
    flag: 'otel-enable-prometheus-metrics-path',
    defaults: { telemetry_config: U },
    valid: ['--otel-enable-prometheus-metrics-path'],
    expect: { 'telemetry_config.enablePrometheusMetricsPath': true },
  },
  {
    flag: 'otel-metrics-on-transport-port',
    defaults: { telemetry_config: U },
    valid: ['--otel-metrics-on-transport-port=false'],
    expect: { 'telemetry_config.metricsOnTransportPort': false },
  },
  {
    flag: 'otel-use-legacy-attributes',
    defaults: { telemetry_config: U },
    valid: ['--otel-use-legacy-attributes=false'],
    expect: { 'telemetry_config.useLegacyAttributes': false },
  },
];

/** Type-level invalid values every flag of a type gets, on top of the hand-written ones. */
function typeInvalid(flag: RunFlagName): [string[], RegExp][] {
  const row = RUN_FLAGS.find((r) => r.long === flag)!;
  switch (row.type) {
    case 'bool':
      return [[[`--${flag}=maybe`], new RegExp(`--${flag} takes true or false, got "maybe"`)]];
    case 'int':
      return [[[`--${flag}`, 'ten'], new RegExp(`--${flag}.*'ten' is invalid. expected an integer`)]];
    case 'float':
      return [[[`--${flag}`, 'half'], new RegExp(`--${flag}.*'half' is invalid. expected a number`)]];
    case 'duration':
      return [[[`--${flag}`, '10'], new RegExp(`--${flag}.*'10' is invalid. expected a duration`)]];
    case 'strings':
      return [[[`--${flag}`, 'a,,b'], new RegExp(`--${flag}.*without empty items`)]];
    case 'stringArray':
      return 'commaSeparated' in row
        ? [[[`--${flag}`, 'a,,b'], new RegExp(`--${flag}.*without empty items`)]]
        : [[[`--${flag}`, ''], new RegExp(`--${flag}.*expected a non-empty value`)]];
    case 'string':
      return 'choices' in row
        ? []
        : [[[`--${flag}`, ''], new RegExp(`--${flag}.*expected a non-empty value`)]];
  }
}

/** Dotted paths where two RunConfigs differ (a section present in only one is one path). */
function changedFields(a: unknown, b: unknown, prefix = ''): string[] {
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((key) => changedFields(a[key], b[key], prefix ? `${prefix}.${key}` : key));
  }
  return isDeepStrictEqual(a, b) ? [] : [prefix];
}

function expectValues(built: Built, expected: Record<string, unknown>): void {
  for (const [path, value] of Object.entries(expected)) {
    expect(pick(built, path), path).toEqual(value);
  }
}

describe('every flag of moat run has a table case', () => {
  it('covers all 106 long flags (93 of the spec, --skip-remote-check, --upstream-timeout, --allow-metadata-address, three rate-limit flags, --tool-pinning, --tool-search, --otel-protocol, --remote-auth-client-metadata-url --request-state-ttl, --guardrail-config and --authz-argument-mapping) but --help (tested through the CLI)', () => {
    const covered = new Set(CASES.map((c) => c.flag));
    const missingCases = RUN_FLAGS.map((r) => r.long).filter((long) => long !== 'help' && !covered.has(long));
    expect(missingCases).toEqual([]);
    expect(RUN_FLAGS).toHaveLength(106);
  });
});

describe.each(CASES)('--$flag', (c) => {
  const target = c.target ?? IMAGE;
  const base = c.with ?? [];

  it('default', () => {
    expectValues(build(base, target), c.defaults);
  });

  it('valid value', () => {
    expectValues(build([...base, ...c.valid], target), c.expect);
  });

  it('fills exactly the RunConfig fields its runConfig column names', () => {
    const columnOf = (long: string): readonly string[] =>
      (RUN_FLAGS as readonly RunFlagSpec[]).find((r) => r.long === long)?.runConfig ?? [];
    const fields = columnOf(c.flag);
    // Other flags the valid case needs (e.g. --oidc-issuer next to --thv-ca-bundle) fill their own fields.
    const others = c.valid.filter((arg) => /^--[a-z]/.test(arg) && arg.split('=')[0] !== `--${c.flag}`);
    const allowed = [...fields, ...others.flatMap((arg) => columnOf(arg.slice(2).split('=')[0]!))];
    const changed = changedFields(build(base, target).config, build([...base, ...c.valid], target).config);
    const related = (a: string, b: string): boolean =>
      a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
    expect(changed.filter((path) => !allowed.some((f) => related(path, f)))).toEqual([]);
    expect(fields.filter((f) => !changed.some((path) => related(path, f)))).toEqual([]);
  });

  const invalid = [...(c.invalid ?? []), ...typeInvalid(c.flag)];
  it.each(invalid.map(([args, error]) => ({ args, error })))('rejects $args', ({ args, error }) => {
    let caught: unknown;
    try {
      build([...base, ...args], target);
    } catch (err) {
      caught = err;
    }
    expect(isMoatError(caught), `expected a usage error for ${args.join(' ')}`).toBe(true);
    expect((caught as Error & { exitCode: number }).exitCode).toBe(2);
    expect((caught as Error).message).toMatch(error);
  });
});

describe('rules across flags', () => {
  it('a name with invalid characters is sanitised with a warning', () => {
    const built = build(['--name', 'my server;rm']);
    expect(built.config.name).toBe('my-server-rm');
    expect(built.warnings[0]).toMatch(/"my server;rm" contained invalid characters/);
  });

  it('--build-with on npx:// fails naming the ecosystem', () => {
    expect(() => build(['--build-with', 'x'], NPX)).toThrow(
      /--build-with is only supported for uvx:\/\/.*npx:\/\//,
    );
  });

  it.each([
    [['--runtime-add-package', 'curl;id'], UVX, /--runtime-add-package "curl;id": not an OS package name/],
    [['--build-with', "x'"], UVX, /--build-with "x'": not a PEP 508 requirement/],
    [['--runtime-image', 'Bad Image'], NPX, /--runtime-image: "Bad Image" is not an image reference/],
    [[], 'npx://x;id', /target npx:\/\/x;id: not a valid npm package name/],
  ])('build options are checked when the flags are read: %j %s', (args, target, message) => {
    expect(() => build(args, target)).toThrow(message);
  });

  it('a local go:// project is saved by absolute path (the build may run from another directory)', () => {
    expect(build([], 'go://./cmd/server').config.protocol_target).toBe(`go://${join(dir, 'cmd/server')}`);
    expect(build([], 'go://example.com/m/cmd/x@v1').config.protocol_target).toBe(
      'go://example.com/m/cmd/x@v1',
    );
  });

  it('build flags on an image fail naming the target kind', () => {
    expect(() => build(['--runtime-image', 'python:3'])).toThrow(
      /--runtime-image can only be used with protocol-scheme targets.*an image \(ghcr.io\/acme\/server:1\)/,
    );
  });

  it('remote-auth flags on an image fail', () => {
    expect(() => build(['--remote-auth', '--remote-auth-client-id', 'x'])).toThrow(
      /--remote-auth, --remote-auth-client-id can only be used with remote URL targets/,
    );
  });

  it('container flags on a remote URL fail', () => {
    expect(() => build(['-e', 'A=1', '-v', `${dir}:/d`], REMOTE)).toThrow(
      /--volume, --env can only be used with containers, not with remote URLs/,
    );
  });

  it('token-exchange flags need --token-exchange-url', () => {
    expect(() => build(['--token-exchange-audience', 'x'])).toThrow(
      /--token-exchange-audience can only be used with --token-exchange-url/,
    );
  });

  it('--proxy-mode with an HTTP transport fails', () => {
    expect(() => build(['--proxy-mode', 'sse'])).toThrow(/--proxy-mode only applies to --transport stdio/);
  });

  it('stdio cannot reach a remote URL', () => {
    expect(() => build(['--transport', 'stdio'], REMOTE)).toThrow(
      /--transport stdio cannot reach a remote URL/,
    );
  });

  it('a missing target is a usage error', () => {
    expect(() =>
      buildRunConfig(
        parseRunArgv([]),
        fsBuildContext(() => undefined, dir),
      ),
    ).toThrow(/missing target/);
  });

  it('server arguments after -- become cmd_args verbatim', () => {
    const parsed = parseRunArgv([IMAGE, '--', '-v', '--port', '8080', '--', 'x y']);
    const { config } = buildRunConfig(
      parsed,
      fsBuildContext(() => undefined, dir),
    );
    expect(config.cmd_args).toEqual(['-v', '--port', '8080', '--', 'x y']);
  });

  it('secret values never appear in the RunConfig JSON', () => {
    const built = build(
      ['--remote-auth-client-secret', 'super-secret-1', '--remote-auth-bearer-token', 'super-secret-2'],
      REMOTE,
    );
    const json = JSON.stringify(built.config);
    expect(json).not.toContain('super-secret-1');
    expect(json).not.toContain('super-secret-2');
    expect(built.secretsToStore.map((s) => s.value)).toEqual(['super-secret-1', 'super-secret-2']);
  });

  it('--thv-ca-bundle and --jwks-auth-token-file alone do not create an OIDC config', () => {
    const { config } = build(['--thv-ca-bundle', caFile, '--jwks-auth-token-file', tokenFile]);
    expect(config).toMatchObject({ thv_ca_bundle: caFile, jwks_auth_token_file: tokenFile });
    expect(config.oidc_config).toBeUndefined();
  });

  it('remote targets get no container fields', () => {
    const { config } = build([], REMOTE);
    expect(config).toMatchObject({
      remote_url: REMOTE,
      image: REMOTE,
      transport: 'streamable-http',
      port: 0,
    });
    expect(config.target_port).toBeUndefined();
    expect(config.permission_profile).toBeNull();
    expect(config.isolate_network).toBeUndefined();
    expect(config.remote_auth_config).toEqual({ timeout: 30_000_000_000, callback_port: 8666 });
  });
});

describe('remote URL address rules', () => {
  it.each([
    'http://169.254.169.254/latest/meta-data',
    'http://2852039166/mcp',
    'http://0xa9.0xfe.0xa9.0xfe/mcp',
    'http://[::ffff:169.254.169.254]/mcp',
    'http://[fd00:ec2::254]/mcp',
    'http://metadata.google.internal/computeMetadata/v1',
  ])('refuses the metadata address %s unless --allow-metadata-address', (url) => {
    expect(() => build([], url)).toThrow(/cloud metadata address.*--allow-metadata-address/);
    expect(pick(build(['--allow-metadata-address'], url), 'remote_url')).toBe(url);
  });

  it('refuses credentials in the URL without repeating them', () => {
    let message = '';
    try {
      build([], 'https://user:s3cret@api.example.com/mcp');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/credentials in the URL are refused/);
    expect(message).not.toContain('s3cret');
  });

  it('keeps loopback remotes (a local CLI talking to a local server)', () => {
    expect(pick(build([], 'http://127.0.0.1:8080/mcp'), 'remote_url')).toBe('http://127.0.0.1:8080/mcp');
  });
});
