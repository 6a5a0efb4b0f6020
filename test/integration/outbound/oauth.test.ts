/**
 * OAuth 2.1 to a remote MCP server against a real oidc-provider: discovery from the remote's 401,
 * dynamic client registration, authorization code + PKCE completed headlessly through the
 * provider's login and consent pages, tokens and registration reused after a restart, refresh on
 * expiry and on a 401, and a clear "log in again" state instead of a refresh loop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runConfigSchema, type RunConfig, type RunConfigInput } from '../../../src/config/runconfig.js';
import {
  createUpstreamAuth,
  forgetRemoteAuth,
  type RemoteAuthStatus,
} from '../../../src/auth/outbound/upstream-auth.js';
import { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';
import { loginBeforeDetach } from '../../../src/auth/outbound/workload.js';
import { registrationSecretName, tokensSecretName } from '../../../src/auth/outbound/token-store.js';
import { startProxy } from '../../../src/proxy/index.js';
import {
  revokeStoredRefreshToken,
  startOAuthProvider,
  type TestOAuthProvider,
} from '../../support/oauth-provider.js';
import { freePort } from '../../support/ports.js';
import { INIT_BODY, MCP_HEADERS, memoryLogger } from '../../support/proxy-harness.js';
import {
  headlessBrowser,
  localCaller,
  localSubject,
  remoteAuthRunConfig,
  startProtectedServer,
  tokenFrom,
  whoami,
  type ProtectedServer,
} from './protected-server.js';

let dir: string;
let op: TestOAuthProvider;
let remote: ProtectedServer;
let secrets: EncryptedSecretsProvider;

function config(name: string, auth: NonNullable<RunConfigInput['remote_auth_config']>): RunConfig {
  return remoteAuthRunConfig(remote.url, name, auth);
}

/** Deps whose "browser" is the provider's headless login; records logins and status changes. */
function harness(options: { now?: () => number; user?: string; provider?: TestOAuthProvider } = {}) {
  const statuses: RemoteAuthStatus[] = [];
  const browser = headlessBrowser((url) => (options.provider ?? op).login(url, options.user ?? 'alice'));
  return {
    logins: browser.logins,
    statuses,
    urls: browser.urls,
    deps: {
      secrets,
      now: options.now,
      notify: browser.notify,
      onStatus: (s: RemoteAuthStatus) => statuses.push(s),
    },
  };
}

/** Revokes a workload's stored refresh token at the provider (as an administrator or the user would). */
async function revokeRefreshToken(workload: string): Promise<void> {
  expect((await revokeStoredRefreshToken(op, secrets, workload, remote.url)).status).toBe(200);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-outbound-'));
  secrets = new EncryptedSecretsProvider(join(dir, 'secrets_encrypted'), () =>
    Promise.resolve('test-password'),
  );
  op = await startOAuthProvider();
  remote = await startProtectedServer({
    issuer: op.issuer,
    scopes: ['mcp:tools'],
    check: tokenFrom(op),
  });
});

afterAll(async () => {
  await remote?.close();
  await op?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('OAuth to a remote MCP server', () => {
  it('discovers from the 401, registers a client, logs in with PKCE, and reuses everything after a restart', async () => {
    const port = await freePort();
    const first = harness();
    const auth = await createUpstreamAuth(config('oauth-a', { callback_port: port }), first.deps);
    expect(first.logins).toHaveLength(1);
    expect((await first.logins[0])!.status).toBe(200);
    expect(op.counts.registrations).toBe(1);
    expect(op.counts.authorizationCodes).toBe(1);
    expect(first.statuses).toEqual([{ state: 'authenticated' }]);
    expect(await localSubject(remote.url, auth)).toBe('alice');

    // What is stored: a registration for the issuer and the workload's tokens, both encrypted.
    expect(await secrets.get(registrationSecretName(op.issuer))).toContain('"client_id"');
    expect(
      JSON.parse(
        (await secrets.get(tokensSecretName('oauth-a', { issuer: op.issuer, resource: remote.url })))!,
      ),
    ).toMatchObject({
      issuer: op.issuer,
      resource: remote.url,
    });

    // A restart: no login, no registration, same tokens.
    const second = harness();
    const again = await createUpstreamAuth(config('oauth-a', { callback_port: port }), second.deps);
    expect(second.logins).toHaveLength(0);
    expect(op.counts.registrations).toBe(1);
    expect(op.counts.authorizationCodes).toBe(1);
    expect(await localSubject(remote.url, again)).toBe('alice');

    // Another workload (or a forgotten one) logs in again but reuses the issuer's registration.
    await forgetRemoteAuth(secrets, 'oauth-a');
    const third = harness({ user: 'bob' });
    const fresh = await createUpstreamAuth(config('oauth-a', { callback_port: port }), third.deps);
    expect(third.logins).toHaveLength(1);
    expect(op.counts.registrations).toBe(1);
    expect(op.counts.authorizationCodes).toBe(2);
    expect(await localSubject(remote.url, fresh)).toBe('bob');
  });

  it('refreshes before expiry, after a restart with an expired token, and on an upstream 401', async () => {
    const port = await freePort();
    let offset = 0;
    const now = () => Date.now() + offset;
    const first = harness({ now });
    const auth = await createUpstreamAuth(config('oauth-refresh', { callback_port: port }), first.deps);
    const before = (await auth!.headers(localCaller)).Authorization;
    const refreshes = op.counts.refreshes;

    offset = 599_000; // inside the one-minute margin of the 600 s token
    const after = (await auth!.headers(localCaller)).Authorization;
    expect(op.counts.refreshes).toBe(refreshes + 1);
    expect(after).not.toBe(before);
    expect(await localSubject(remote.url, auth)).toBe('alice');

    // A restart with the stored token already expired: refreshed at start, no login.
    offset = 2 * 599_000;
    const restart = harness({ now });
    const restarted = await createUpstreamAuth(
      config('oauth-refresh', { callback_port: port }),
      restart.deps,
    );
    expect(restart.logins).toHaveLength(0);
    expect(op.counts.refreshes).toBe(refreshes + 2);
    expect(restart.statuses).toEqual([{ state: 'authenticated' }]);

    // The remote stops accepting the current token: a 401 triggers one refresh and the retry works.
    const current = (await restarted!.headers(localCaller)).Authorization!;
    remote.reject.add(current.slice('Bearer '.length));
    const denied = await fetch(remote.url, { method: 'POST', headers: { authorization: current } });
    expect(denied.status).toBe(401);
    expect(await restarted!.onUnauthorized!(denied.headers.get('www-authenticate') ?? undefined)).toBe(true);
    expect(op.counts.refreshes).toBe(refreshes + 3);
    expect((await restarted!.headers(localCaller)).Authorization).not.toBe(current);
    expect(await localSubject(remote.url, restarted)).toBe('alice');
  });

  it('reports that a new login is needed once, instead of retrying a refused refresh token', async () => {
    const port = await freePort();
    let offset = 0;
    const h = harness({ now: () => Date.now() + offset });
    const auth = await createUpstreamAuth(config('oauth-revoked', { callback_port: port }), h.deps);
    await revokeRefreshToken('oauth-revoked');

    offset = 600_000;
    const errors = op.counts.refreshErrors;
    await expect(auth!.headers(localCaller)).rejects.toThrow(
      /needs a new OAuth login .*run: moat restart oauth-revoked/,
    );
    await expect(auth!.headers(localCaller)).rejects.toThrow(/needs a new OAuth login/);
    expect(await auth!.onUnauthorized!(undefined)).toBe(false);
    expect(op.counts.refreshErrors).toBe(errors + 1);
    expect(h.statuses.map((s) => s.state)).toEqual(['authenticated', 'reauth_required']);
    // The dead tokens are gone, so a restart goes straight to a login.
    expect(
      await secrets.get(tokensSecretName('oauth-revoked', { issuer: op.issuer, resource: remote.url })),
    ).toBeUndefined();

    // Through the real proxy, a client gets a JSON-RPC error saying what to do (not a hang or a loop).
    const proxy = await startProxy(
      config('oauth-revoked', {}),
      { kind: 'http', url: remote.url, transport: 'streamable-http', remote: true },
      { upstreamAuth: auth, logger: memoryLogger().logger },
    );
    try {
      const response = await fetch(`${proxy.url}/mcp`, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify(INIT_BODY),
      });
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        /needs a new OAuth login .*run: moat restart oauth-revoked/,
      );
    } finally {
      await proxy.close();
    }
  });

  it('in the foreground, starts one new login by itself when the tokens die, then serves again', async () => {
    const port = await freePort();
    let offset = 0;
    const h = harness({ now: () => Date.now() + offset, user: 'erin' });
    const auth = await createUpstreamAuth(config('oauth-relogin', { callback_port: port }), {
      ...h.deps,
      autoLogin: true,
    });
    await revokeRefreshToken('oauth-relogin');
    const codes = op.counts.authorizationCodes;
    offset = 600_000;
    await expect(auth!.headers(localCaller)).rejects.toThrow(/needs a new OAuth login/);
    await vi.waitFor(() => expect(h.logins).toHaveLength(2), { timeout: 30_000 });
    expect((await h.logins[1])!.status).toBe(200);
    offset = 0;
    await vi.waitFor(() => expect(h.statuses.at(-1)).toEqual({ state: 'authenticated' }), {
      timeout: 30_000,
    });
    expect(h.statuses.map((s) => s.state)).toEqual(['authenticated', 'reauth_required', 'authenticated']);
    expect(op.counts.authorizationCodes).toBe(codes + 1);
    expect(await localSubject(remote.url, auth)).toBe('erin');
  });

  it('steps up the scope on a 403 insufficient_scope through the real proxy, in the foreground', async () => {
    const op2 = await startOAuthProvider({ resourceScope: 'mcp:tools mcp:admin' });
    const admin = await startProtectedServer({
      issuer: op2.issuer,
      scopes: ['mcp:tools'],
      check: async (authorization, resource) =>
        (await op2.verify((authorization ?? '').replace(/^Bearer\s+/i, ''), resource)).sub,
      requireScope: {
        scope: 'mcp:admin',
        has: async (authorization) => {
          const claims = await op2.verify(authorization.replace(/^Bearer\s+/i, ''), admin.url);
          return typeof claims.scope === 'string' && claims.scope.split(' ').includes('mcp:admin');
        },
      },
    });
    const h = harness({ provider: op2, user: 'frank' });
    const cfg = runConfigSchema.parse({
      ...config('oauth-stepup', { callback_port: await freePort() }),
      remote_url: admin.url,
      image: admin.url,
    });
    const auth = await createUpstreamAuth(cfg, { ...h.deps, autoLogin: true });
    const proxy = await startProxy(
      cfg,
      { kind: 'http', url: admin.url, transport: 'streamable-http', remote: true },
      { upstreamAuth: auth, logger: memoryLogger().logger },
    );
    try {
      expect(h.urls[0]!.searchParams.get('scope')).toBe('mcp:tools');
      expect((await whoami(`${proxy.url}/mcp`, () => Promise.resolve({}))).subject).toBe('frank');
      expect(h.urls[1]!.searchParams.get('scope')).toBe('mcp:tools mcp:admin');
      expect(op2.counts.authorizationCodes).toBe(2);
    } finally {
      await proxy.close();
      await admin.close();
      await op2.close();
    }
  });

  it('a remote that lets initialize through: the foreground logs in at its first 401 with that scope, a terminal login before detaching uses scopes_supported', async () => {
    const op3 = await startOAuthProvider({ resourceScope: 'mcp:tools mcp:read' });
    const lazy = await startProtectedServer({
      issuer: op3.issuer,
      scopes: ['mcp:tools', 'mcp:read'],
      openInitialize: { challengeScope: ['mcp:read'] },
      check: tokenFrom(op3),
    });
    try {
      const foreground = harness({ provider: op3, user: 'gina' });
      const cfg = remoteAuthRunConfig(lazy.url, 'oauth-lazy', { callback_port: await freePort() });
      const auth = await createUpstreamAuth(cfg, { ...foreground.deps, autoLogin: true });
      expect(foreground.logins).toHaveLength(0);
      expect(await auth!.headers(localCaller)).toEqual({});
      const proxy = await startProxy(
        cfg,
        { kind: 'http', url: lazy.url, transport: 'streamable-http', remote: true },
        { upstreamAuth: auth, logger: memoryLogger().logger },
      );
      try {
        expect((await whoami(`${proxy.url}/mcp`, () => Promise.resolve({}))).subject).toBe('gina');
      } finally {
        await proxy.close();
      }
      expect(foreground.urls.map((u) => u.searchParams.get('scope'))).toEqual(['mcp:read']);

      // `moat run` (detached) logs in on the terminal before the supervisor starts: no 401 to wait for.
      const terminal = harness({ provider: op3, user: 'gina' });
      await loginBeforeDetach(
        remoteAuthRunConfig(lazy.url, 'oauth-lazy-detached', { callback_port: await freePort() }),
        secrets,
        terminal.deps.notify,
      );
      expect(terminal.urls.map((u) => u.searchParams.get('scope'))).toEqual(['mcp:tools mcp:read']);
    } finally {
      await lazy.close();
      await op3.close();
    }
  });

  it('uses --remote-auth-issuer discovery with the OpenID default scopes', async () => {
    const h = harness();
    const auth = await createUpstreamAuth(
      config('oauth-issuer', { issuer: op.issuer, resource: remote.url, callback_port: await freePort() }),
      h.deps,
    );
    expect(h.urls[0]!.searchParams.get('scope')).toBe('openid profile email');
    expect(h.urls[0]!.searchParams.get('resource')).toBe(remote.url);
    expect(await localSubject(remote.url, auth)).toBe('alice');
  });
});

describe('OAuth bad inputs', () => {
  it.each(['http://169.254.169.254', 'http://[::ffff:169.254.169.254]', 'http://metadata.google.internal'])(
    'refuses --remote-auth-issuer %s before any request (the rules of discovered URLs)',
    async (issuer) => {
      await expect(createUpstreamAuth(config('metadata-issuer', { issuer }), harness().deps)).rejects.toThrow(
        /--remote-auth-issuer .* link-local or cloud metadata address; refused/,
      );
    },
  );

  it('names an unreachable issuer', async () => {
    const closed = await freePort();
    await expect(
      createUpstreamAuth(config('bad-issuer', { issuer: `http://127.0.0.1:${closed}` }), harness().deps),
    ).rejects.toThrow(new RegExp(`cannot reach the authorization server http://127.0.0.1:${closed}`));
  });

  it('names a wrong client secret at the code exchange', async () => {
    const port = await freePort();
    const registered = await fetch(`${op.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        application_type: 'native',
      }),
    });
    const client = (await registered.json()) as { client_id: string };
    const secretFile = join(dir, 'wrong-secret');
    await import('node:fs/promises').then((fs) => fs.writeFile(secretFile, 'not-the-secret\n'));
    const h = harness();
    await expect(
      createUpstreamAuth(
        config('bad-secret', {
          issuer: op.issuer,
          resource: remote.url,
          client_id: client.client_id,
          client_secret_file: secretFile,
          callback_port: port,
        }),
        h.deps,
      ),
    ).rejects.toThrow(
      /refused to exchange the authorization code: invalid_client.*check the client ID and secret/,
    );
    expect(h.statuses).toEqual([]);
  });

  it('ignores a callback with the wrong state, then completes the real one', async () => {
    const port = await freePort();
    let wrongState: Response | undefined;
    const logins: Array<Promise<unknown>> = [];
    const pending = createUpstreamAuth(config('bad-state', { callback_port: port }), {
      secrets,
      notify: (message: string) => {
        const url = /https?:\/\/\S+$/.exec(message)![0];
        logins.push(
          fetch(`http://127.0.0.1:${port}/callback?code=forged&state=not-the-state`).then(async (r) => {
            wrongState = r;
            return op.login(url, 'carol');
          }),
        );
      },
    });
    const auth = await pending;
    expect(wrongState!.status).toBe(400);
    expect(await wrongState!.text()).toContain('state parameter does not match');
    expect(await localSubject(remote.url, auth)).toBe('carol');
  });

  it('times out when nobody logs in, naming the flag, with the scope under --remote-auth-scope-param-name', async () => {
    const urls: string[] = [];
    await expect(
      createUpstreamAuth(config('timeout', { callback_port: 0, timeout: 1e9, scope_param_name: 'scopes' }), {
        secrets,
        notify: (m: string) => urls.push(/https?:\/\/\S+$/.exec(m)![0]),
      }),
    ).rejects.toThrow(
      'remote authentication timed out after 1s waiting for the browser login (raise --remote-auth-timeout)',
    );
    const url = new URL(urls[0]!);
    expect(url.searchParams.get('scopes')).toBe('mcp:tools');
    expect(url.searchParams.has('scope')).toBe(false);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(remote.url);
  });
});
