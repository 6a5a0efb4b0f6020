/**
 * `moat run <remote URL>` with outbound authentication, through the built binary, a detached
 * supervisor and the real proxy: a protected remote MCP server used with --remote-auth and no
 * pre-registered client survives a restart (and an expiring token) without a new login; static
 * credentials reach the remote while the client's own token does not; secret values given as
 * flags never appear in the RunConfig, an export, or the supervisor's arguments.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';
import {
  ensureBuilt,
  MOAT_MAIN,
  moat,
  moatEnv,
  moatHome,
  moatOk,
  printedUrl,
  removeHome,
  workload,
} from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';
import {
  revokeStoredRefreshToken,
  startOAuthProvider,
  type TestOAuthProvider,
} from '../../support/oauth-provider.js';
import { freePort } from '../../support/ports.js';
import { startProtectedServer, tokenFrom, whoami, type ProtectedServer } from './protected-server.js';

const PASSWORD = { MOAT_SECRETS_PASSWORD: 'e2e-secrets-password' };
let home: string;
let secrets: EncryptedSecretsProvider;

async function supervisorArgv(name: string): Promise<string> {
  const status = JSON.parse(await readFile(join(home, 'data', 'statuses', `${name}.json`), 'utf8')) as {
    process_id: number;
  };
  expect(status.process_id).toBeGreaterThan(0);
  return (await readFile(`/proc/${status.process_id}/cmdline`, 'utf8')).replaceAll('\0', ' ');
}

beforeAll(async () => {
  await ensureBuilt();
  home = moatHome();
  secrets = new EncryptedSecretsProvider(join(home, 'data', 'secrets_encrypted'), () =>
    Promise.resolve(PASSWORD.MOAT_SECRETS_PASSWORD),
  );
}, 300_000);

afterAll(async () => {
  await moat(home, ['rm', '--all'], PASSWORD);
  removeHome(home);
});

describe('moat run with static credentials', { timeout: 300_000 }, () => {
  let remote: ProtectedServer;
  beforeAll(async () => {
    remote = await startProtectedServer({
      check: (authorization) =>
        Promise.resolve(authorization === 'Bearer e2e-bearer-value-7Q' ? 'static-user' : undefined),
    });
  });
  afterAll(() => remote.close());

  it('sends the configured credentials upstream, never the client token, and keeps values out of configs and argv', async () => {
    const name = uniqueName('static');
    await secrets.set('E2E_API_KEY', 'e2e-api-key-value-3Z');
    const out = await moatOk(
      home,
      [
        'run',
        remote.url,
        '--name',
        name,
        '--remote-auth-bearer-token',
        'e2e-bearer-value-7Q',
        '--remote-forward-headers',
        'X-Team=blue',
        '--remote-forward-headers-secret',
        'X-Api-Key=E2E_API_KEY',
      ],
      PASSWORD,
    );
    const url = printedUrl(out);
    const seen = await whoami(url, () => Promise.resolve({ Authorization: 'Bearer the-clients-own-token' }));
    expect(seen.subject).toBe('static-user');
    expect(seen.headers.authorization).toBe('Bearer e2e-bearer-value-7Q');
    expect(seen.headers['x-team']).toBe('blue');
    expect(seen.headers['x-api-key']).toBe('e2e-api-key-value-3Z');
    for (const headers of remote.seen) expect(JSON.stringify(headers)).not.toContain('the-clients-own-token');

    const saved = await readFile(join(home, 'state', 'runconfigs', `${name}.json`), 'utf8');
    expect(saved).toContain(`"bearer_token": "__moat_workloads_BEARER_TOKEN_${name},target=bearer_token"`);
    const exported = join(home, 'exported.json');
    await moatOk(home, ['export', name, exported], PASSWORD);
    const argv = await supervisorArgv(name);
    for (const text of [saved, await readFile(exported, 'utf8'), argv, out]) {
      expect(text).not.toContain('e2e-bearer-value-7Q');
      expect(text).not.toContain('e2e-api-key-value-3Z');
      expect(text).not.toContain(PASSWORD.MOAT_SECRETS_PASSWORD);
    }

    await moatOk(home, ['rm', name], PASSWORD);
    expect(await secrets.get(`__moat_workloads_BEARER_TOKEN_${name}`)).toBeUndefined();
  });

  it('fails on the terminal, before starting, when a referenced secret is missing', async () => {
    const result = await moat(
      home,
      [
        'run',
        remote.url,
        '--name',
        uniqueName('missing'),
        '--remote-forward-headers-secret',
        'X-K=NOT_THERE',
      ],
      PASSWORD,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('secret "NOT_THERE" for header X-K (--remote-forward-headers-secret)');
  });
});

describe('moat run --remote-auth', { timeout: 300_000 }, () => {
  let op: TestOAuthProvider;
  let remote: ProtectedServer;
  beforeAll(async () => {
    // Tokens live 61 s and are refreshed within a minute of expiry: any restart after a second refreshes.
    op = await startOAuthProvider({ accessTokenTtlSeconds: 61 });
    remote = await startProtectedServer({
      issuer: op.issuer,
      scopes: ['mcp:tools'],
      check: tokenFrom(op),
    });
  });
  afterAll(async () => {
    await remote.close();
    await op.close();
  });

  it('logs in once with DCR + PKCE on the terminal, then survives a restart and an expiring token', async () => {
    const name = uniqueName('oauth');
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        MOAT_MAIN,
        'run',
        remote.url,
        '--name',
        name,
        '--remote-auth',
        '--remote-auth-skip-browser',
        '--remote-auth-callback-port',
        String(port),
      ],
      { env: moatEnv(home, PASSWORD), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    let login: Promise<unknown> | undefined;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/.exec(stderr)?.[1];
      if (url && !login) login = op.login(url, 'dora');
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect({ code, stderr }).toMatchObject({ code: 0 });
    expect(stderr).toContain(`Open this URL in a browser to log in to ${op.issuer}`);
    expect(op.counts.registrations).toBe(1);
    expect(op.counts.authorizationCodes).toBe(1);
    const url = printedUrl(stdout);
    expect((await whoami(url, () => Promise.resolve({}))).subject).toBe('dora');

    await sleep(1500); // let the 61 s token enter its refresh window
    const refreshes = op.counts.refreshes;
    await moatOk(home, ['stop', name], PASSWORD);
    const restarted = await moatOk(home, ['start', name], PASSWORD);
    expect(printedUrl(restarted)).toBe(url);
    expect((await whoami(url, () => Promise.resolve({}))).subject).toBe('dora');
    expect(op.counts.authorizationCodes).toBe(1);
    expect(op.counts.registrations).toBe(1);
    expect(op.counts.refreshes).toBeGreaterThan(refreshes);
    expect((await workload(home, name))?.status).toBe('running');
    expect(await supervisorArgv(name)).not.toContain(PASSWORD.MOAT_SECRETS_PASSWORD);

    // The refresh token dies (revoked at the provider): the detached workload says so and fails fast.
    expect((await revokeStoredRefreshToken(op, secrets, name, remote.url)).status).toBe(200);
    await sleep(1500); // into the refresh window again
    await expect(whoami(url, () => Promise.resolve({}))).rejects.toThrow(/needs a new OAuth login/);
    const status = await workload(home, name);
    expect(status?.status).toBe('unhealthy');
    expect(status?.status_context).toMatch(
      /remote authentication needed: the authorization server refused the refresh token \(invalid_grant\)/,
    );
    expect(op.counts.authorizationCodes).toBe(1);
  });
});

describe('moat run with token exchange', { timeout: 300_000 }, () => {
  let op: TestOAuthProvider;
  let remote: ProtectedServer;
  beforeAll(async () => {
    op = await startOAuthProvider();
    remote = await startProtectedServer({
      check: tokenFrom(op),
    });
  });
  afterAll(async () => {
    await remote.close();
    await op.close();
  });

  it("exchanges each caller's validated token for one the remote accepts, once per caller", async () => {
    const name = uniqueName('exchange');
    const url = printedUrl(
      await moatOk(
        home,
        [
          'run',
          remote.url,
          '--name',
          name,
          '--oidc-issuer',
          op.issuer,
          '--oidc-audience',
          op.inboundAudience,
          '--oidc-insecure-allow-http',
          '--jwks-allow-private-ip',
          '--token-exchange-url',
          `${op.issuer}/token`,
          '--token-exchange-client-id',
          op.exchangeClient.clientId,
          '--token-exchange-client-secret',
          op.exchangeClient.clientSecret,
          '--token-exchange-audience',
          remote.url,
          '--token-exchange-scopes',
          'mcp:tools',
        ],
        PASSWORD,
      ),
    );
    const alice = await op.inboundToken('alice');
    const before = op.counts.exchanges;
    const seen = await whoami(url, () => Promise.resolve({ Authorization: `Bearer ${alice}` }));
    expect(seen.subject).toBe('alice');
    expect(seen.headers.authorization).not.toContain(alice);
    // One MCP session of several requests, one exchange.
    expect(op.counts.exchanges).toBe(before + 1);
    expect((await whoami(url, () => Promise.resolve({ Authorization: `Bearer ${alice}` }))).subject).toBe(
      'alice',
    );
    expect(op.counts.exchanges).toBe(before + 1);
    const saved = await readFile(join(home, 'state', 'runconfigs', `${name}.json`), 'utf8');
    expect(saved).not.toContain(op.exchangeClient.clientSecret);
    expect(await supervisorArgv(name)).not.toContain(op.exchangeClient.clientSecret);
    await moatOk(home, ['rm', name], PASSWORD);
  });
});
