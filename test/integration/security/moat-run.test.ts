/**
 * `moat run` end to end with inbound security: the built binary proxies a remote MCP server
 * (a real SDK server on 127.0.0.1) with OIDC from a real provider, a Cedar policy file and an
 * audit log file; bad security files stop the start with a clear message.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startV2StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { ensureBuilt, eventually, moat, moatHome, removeHome, spawnMoat } from '../../support/moat-cli.js';
import { oidcRunFlags, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';

let idp: TestOidcProvider;
let backend: HttpBackendServer;
let dir: string;
let home: string;
let child: ChildProcess | undefined;

const POLICY = `version: "1.0"
type: cedarv1
cedar:
  policies:
    - permit(principal, action == Action::"call_tool", resource == Tool::"echo");
    - permit(principal in MoatGroup::"admins", action, resource);
`;

beforeAll(async () => {
  await ensureBuilt();
  idp = await startTestOidcProvider([
    { id: 'alice', name: 'Alice', groups: ['eng'] },
    { id: 'root', groups: ['admins'] },
  ]);
  backend = await startV2StreamableBackend();
  dir = await mkdtemp(join(tmpdir(), 'moat-run-security-'));
  home = moatHome();
  await writeFile(join(dir, 'authz.yaml'), POLICY);
  await writeFile(join(dir, 'audit.json'), JSON.stringify({ logFile: join(dir, 'audit.log') }));
}, 300_000);

afterAll(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    process.kill(child.pid, 'SIGINT');
    await exited;
  }
  await backend.close();
  await idp.close();
  removeHome(home);
  await rm(dir, { recursive: true, force: true });
});

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'moat-run-security', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe('moat run with OIDC, Cedar and audit', () => {
  it('protects a remote MCP server end to end', async () => {
    child = spawnMoat(home, [
      'run',
      backend.url,
      '--name',
      'protected',
      '--foreground',
      ...oidcRunFlags(idp),
      '--authz-config',
      join(dir, 'authz.yaml'),
      '--audit-config',
      join(dir, 'audit.json'),
    ]);
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    const url = await eventually(
      'the proxy URL',
      () => Promise.resolve(/URL: (\S+)/.exec(out)?.[1]),
      120_000,
    );

    const anonymous = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain(
      `resource_metadata="${new URL(url).origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    await anonymous.text();

    const alice = await connect(url, await idp.token('alice'));
    try {
      expect((await alice.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      const denied = await alice.callTool({ name: 'add', arguments: { a: 1, b: 2 } }).then(
        () => 'allowed',
        (err: unknown) => (err as Error).message,
      );
      expect(denied).toContain('Access denied');
    } finally {
      await alice.close();
    }
    const root = await connect(url, await idp.token('root'));
    try {
      const result = await root.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      expect((result.content as Array<{ text: string }>)[0]?.text).toBe('5');
    } finally {
      await root.close();
    }

    const auditFile = join(dir, 'audit.log');
    const events = (await readFile(auditFile, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            outcome: string;
            subjects: { user_id: string };
            target: { name?: string };
          },
      );
    expect(events.find((e) => e.type === 'mcp_tool_call' && e.subjects.user_id === 'alice')).toMatchObject({
      outcome: 'denied',
      target: { name: 'add' },
    });
    expect(events.find((e) => e.type === 'mcp_tool_call' && e.subjects.user_id === 'root')).toMatchObject({
      outcome: 'success',
    });
    expect((await stat(auditFile)).mode & 0o777).toBe(0o600);
  });

  it.each([
    [
      'a policy that does not parse',
      ['--authz-config', 'bad.yaml'],
      /bad\.yaml: cedar\.policies\[0\] \(line 5\) does not parse at line 1, column \d+ of the policy/,
    ],
    [
      'an unknown audit event type',
      ['--audit-config', 'bad-audit.json'],
      /unknown event type "mcp_tool_cal"/,
    ],
    [
      'a webhook file that is not YAML',
      ['--webhook-config', 'bad-hooks.yaml'],
      /bad-hooks\.yaml: not valid YAML or JSON/,
    ],
    ['a webhook without a url', ['--webhook-config', 'no-url.json'], /no-url\.json: .*validating\[0\]\.url/],
    [
      'an http issuer',
      ['--oidc-issuer', 'http://127.0.0.1:9'],
      /--oidc-issuer must use https:\/\/ \(for local development add --oidc-insecure-allow-http\)/,
    ],
    [
      'a loopback issuer without --jwks-allow-private-ip',
      ['--oidc-issuer', 'http://127.0.0.1:9', '--oidc-insecure-allow-http'],
      /--oidc-issuer: http:\/\/127\.0\.0\.1:9 points at a private or loopback address; add --jwks-allow-private-ip/,
    ],
  ])('refuses to start with %s', async (_what, flags, message) => {
    await writeFile(
      join(dir, 'bad.yaml'),
      'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - permit(principal, action resource);\n',
    );
    await writeFile(join(dir, 'bad-audit.json'), '{"eventTypes": ["mcp_tool_cal"]}');
    await writeFile(join(dir, 'bad-hooks.yaml'), 'validating:\n  - name: a\n   url: [\n');
    await writeFile(join(dir, 'no-url.json'), '{"validating": [{"name": "a"}]}');
    const args = flags.map((f) => (f.endsWith('.yaml') || f.endsWith('.json') ? join(dir, f) : f));
    const result = await moat(home, [
      'run',
      backend.url,
      '--name',
      `bad-${Math.random().toString(36).slice(2, 8)}`,
      '-f',
      ...args,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
