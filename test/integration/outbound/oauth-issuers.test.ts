/**
 * Outbound OAuth with more than one authorization server, against two real oidc-providers:
 * RFC 9207 (the authorization response's `iss` must be the server the login started at, so a
 * mix-up attacker's code is never redeemed), and tokens kept per issuer (a remote that moves to
 * another authorization server gets a new client and login there, the first server's tokens are
 * neither sent to the second nor overwritten).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../../src/config/runconfig.js';
import { createUpstreamAuth } from '../../../src/auth/outbound/upstream-auth.js';
import type { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';
import { tokensSecretName } from '../../../src/auth/outbound/token-store.js';
import { startOAuthProvider, type TestOAuthProvider } from '../../support/oauth-provider.js';
import { freePort } from '../../support/ports.js';
import {
  headlessBrowser,
  localCaller,
  localSubject,
  remoteAuthRunConfig,
  scratchSecrets,
  startServerTrusting,
  storedRegistration,
  type ProtectedServer,
} from './protected-server.js';

let scratch: Awaited<ReturnType<typeof scratchSecrets>>;
let secrets: EncryptedSecretsProvider;
let first: TestOAuthProvider;
let second: TestOAuthProvider;
/** The provider whose tokens the remote accepts (and whose issuer its metadata names). */
let current: TestOAuthProvider;
let remote: ProtectedServer;

function config(name: string, callbackPort: number): RunConfig {
  return remoteAuthRunConfig(remote.url, name, { timeout: 30e9, callback_port: callbackPort });
}

/** Deps whose "browser" logs in with `login` (at whatever provider the login URL names). */
function browser(login: Parameters<typeof headlessBrowser>[0]) {
  const headless = headlessBrowser(login);
  return { ...headless, deps: { secrets, notify: headless.notify } };
}

const atProvider = (url: string, user: string) =>
  (new URL(url).origin === first.issuer ? first : second).login(url, user);

function movedTo(provider: TestOAuthProvider): void {
  current = provider;
  remote.useIssuer(provider.issuer);
}

function storedTokens(workload: string, provider: TestOAuthProvider): Promise<string | undefined> {
  return secrets.get(tokensSecretName(workload, { issuer: provider.issuer, resource: remote.url }));
}

beforeAll(async () => {
  scratch = await scratchSecrets('moat-issuers-');
  secrets = scratch.secrets;
  first = await startOAuthProvider();
  second = await startOAuthProvider();
  current = first;
  remote = await startServerTrusting(() => current);
});

afterAll(async () => {
  await remote?.close();
  await first?.close();
  await second?.close();
  await scratch?.remove();
});

describe('RFC 9207: the authorization response names its issuer', () => {
  it('the real provider announces iss and sends it; the login accepts the exact issuer', async () => {
    const metadata = (await (await fetch(`${first.issuer}/.well-known/openid-configuration`)).json()) as {
      authorization_response_iss_parameter_supported?: boolean;
    };
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    let iss: string | null = null;
    const h = browser((url) =>
      first.login(url, 'alice', {
        rewriteCallback: (callback) => ((iss = callback.searchParams.get('iss')), callback),
      }),
    );
    const auth = await createUpstreamAuth(config('iss-ok', await freePort()), h.deps);
    expect(iss).toBe(first.issuer);
    expect(await localSubject(remote.url, auth)).toBe('alice');
  });

  it('refuses a mix-up: a code from another server (its own iss) is never redeemed anywhere', async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    // The attacker's server has a client with Moat's loopback redirect URI.
    const attackerClient = (await (
      await fetch(`${second.issuer}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [redirectUri],
          application_type: 'native',
          token_endpoint_auth_method: 'none',
        }),
      })
    ).json()) as { client_id: string };
    const before = { first: first.counts.tokenRequests, second: second.counts.tokenRequests };
    // The user's browser is steered to the attacker's server with Moat's state and PKCE challenge.
    const h = browser((url) => {
      const steered = new URL(url);
      const attacker = new URL(`${second.issuer}${steered.pathname}${steered.search}`);
      attacker.searchParams.set('client_id', attackerClient.client_id);
      return second.login(attacker.href, 'alice');
    });
    await expect(createUpstreamAuth(config('iss-mixup', port), h.deps)).rejects.toThrow(
      `the authorization response comes from issuer ${JSON.stringify(second.issuer)}, not from ${JSON.stringify(first.issuer)} where the login started (RFC 9207; a possible mix-up attack): refused, no token requested`,
    );
    // The callback itself was answered (state matched); the code went to no token endpoint.
    expect((await h.logins[0])!.status).toBe(200);
    expect(first.counts.tokenRequests).toBe(before.first);
    expect(second.counts.tokenRequests).toBe(before.second);
    expect(await storedTokens('iss-mixup', first)).toBeUndefined();
  });

  it('refuses a response without iss from a server that announces it', async () => {
    const before = first.counts.tokenRequests;
    const h = browser((url) =>
      first.login(url, 'alice', {
        rewriteCallback: (callback) => (callback.searchParams.delete('iss'), callback),
      }),
    );
    await expect(createUpstreamAuth(config('iss-missing', await freePort()), h.deps)).rejects.toThrow(
      `the authorization server ${first.issuer} announces the iss parameter (RFC 9207) but its authorization response has none: refused, no token requested`,
    );
    expect(first.counts.tokenRequests).toBe(before);
  });
});

describe('tokens are kept per issuer', () => {
  it('follows a remote to another authorization server without handing it the first one’s client or tokens', async () => {
    movedTo(first);
    const port = await freePort();
    const h = browser((url) => atProvider(url, 'dana'));
    const auth = await createUpstreamAuth(config('moving', port), { ...h.deps, autoLogin: true });
    expect(await localSubject(remote.url, auth)).toBe('dana');
    const firstTokens = await storedTokens('moving', first);
    const firstClient = await storedRegistration(secrets, first.issuer);
    const firstToken = (await auth!.headers(localCaller)).Authorization!;

    // The remote now names the second server and refuses the first one's tokens.
    movedTo(second);
    const seen = { tokenRequests: second.counts.tokenRequests, registrations: second.counts.registrations };
    const denied = await fetch(remote.url, { method: 'POST', headers: { authorization: firstToken } });
    expect(denied.status).toBe(401);
    expect(await auth!.onUnauthorized!(denied.headers.get('www-authenticate') ?? undefined)).toBe(true);

    // A new registration and one login at the second server; no refresh there (the first's refresh
    // token never travelled), and the client it saw is its own.
    expect(second.counts.registrations).toBe(seen.registrations + 1);
    expect(second.counts.tokenRequests).toBe(seen.tokenRequests + 1);
    expect(second.counts.refreshes + second.counts.refreshErrors).toBe(0);
    expect(h.urls.at(-1)!.origin).toBe(second.issuer);
    expect(h.urls.at(-1)!.searchParams.get('client_id')).not.toBe(firstClient.client_id);
    expect(await localSubject(remote.url, auth)).toBe('dana');
    // The first server's tokens are untouched; the second's are stored beside them.
    expect(await storedTokens('moving', first)).toBe(firstTokens);
    expect(JSON.parse((await storedTokens('moving', second))!)).toMatchObject({ issuer: second.issuer });

    // A restart at either server uses that server's own tokens: no login anywhere.
    const codes = first.counts.authorizationCodes + second.counts.authorizationCodes;
    const atSecond = browser((url) => atProvider(url, 'dana'));
    const again = await createUpstreamAuth(config('moving', port), atSecond.deps);
    expect(await localSubject(remote.url, again)).toBe('dana');
    movedTo(first);
    const atFirst = browser((url) => atProvider(url, 'dana'));
    const back = await createUpstreamAuth(config('moving', port), atFirst.deps);
    expect(await localSubject(remote.url, back)).toBe('dana');
    expect(atSecond.logins.length + atFirst.logins.length).toBe(0);
    expect(first.counts.authorizationCodes + second.counts.authorizationCodes).toBe(codes);
  });
});
