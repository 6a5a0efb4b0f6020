/**
 * Inbound token validation against a real OpenID provider (oidc-provider, in-process on
 * 127.0.0.1). The provider is on loopback, so every validator here sets allowPrivateIp and
 * allowHttp, except the tests that prove those refusals.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundAuth } from '../../../src/auth/inbound/authenticate.js';
import { IdpHttpClient, IdpUnavailableError } from '../../../src/auth/inbound/idp-http.js';
import { identityFromClaims } from '../../../src/auth/inbound/identity.js';
import { resolveInboundAuth, type InboundAuthSettings } from '../../../src/auth/inbound/settings.js';
import {
  TokenRejectedError,
  TokenValidator,
  type TokenValidatorOptions,
} from '../../../src/auth/inbound/token-validator.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { makeCertificates } from '../../support/redis.js';

let idp: TestOidcProvider;
let dir: string;
const clients: IdpHttpClient[] = [];

beforeAll(async () => {
  idp = await startTestOidcProvider([
    { id: 'alice', name: 'Alice', email: 'alice@example.com', groups: ['eng', 'admins'] },
    { id: 'bob', name: 'Bob', claims: { roles: ['viewer'] } },
  ]);
  dir = await mkdtemp(join(tmpdir(), 'moat-oidc-'));
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await idp.close();
  await rm(dir, { recursive: true, force: true });
});

function settings(overrides: Partial<InboundAuthSettings> = {}): InboundAuthSettings {
  return {
    issuer: idp.issuer,
    audience: idp.jwtResource,
    scopesSupported: ['openid'],
    requiredScopes: [],
    allowHttp: true,
    allowPrivateIp: true,
    ...overrides,
  };
}

function validator(s: InboundAuthSettings, options: TokenValidatorOptions = {}): TokenValidator {
  const http = new IdpHttpClient({
    allowHttp: s.allowHttp,
    allowPrivateIp: s.allowPrivateIp,
    caBundle: s.caBundle,
  });
  clients.push(http);
  return new TokenValidator(s, http, { discoveryBackoffMs: 10, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the token to be refused');
}

describe('JWT validation with discovery', () => {
  it('accepts a valid token and builds the identity from its claims', async () => {
    const claims = await validator(settings()).validate(await idp.token('alice'));
    expect(claims.iss).toBe(idp.issuer);
    expect(claims.aud).toBe(idp.jwtResource);
    const identity = identityFromClaims(claims);
    expect(identity).toMatchObject({
      subject: 'alice',
      name: 'Alice',
      email: 'alice@example.com',
      groups: ['eng', 'admins'],
      local: false,
    });
    expect(identity.claims.jti).toBeUndefined();
  });

  it('reads roles when there is no groups claim', async () => {
    const claims = await validator(settings()).validate(await idp.token('bob'));
    expect(identityFromClaims(claims).groups).toEqual(['viewer']);
  });

  it('refuses a token issued for another audience', async () => {
    const token = await idp.token('alice', { resource: 'https://other.example/mcp' });
    const err = await rejection(validator(settings()).validate(token));
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect(err.message).toBe('the token was issued for another audience');
  });

  it('refuses an expired token', async () => {
    const token = await idp.token('alice');
    const inOneHour = () => new Date(Date.now() + 3_600_000);
    const err = await rejection(validator(settings(), { now: inOneHour }).validate(token));
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect(err.message).toBe('the token has expired');
  });

  it('accepts a token that expired within the clock skew, not beyond it', async () => {
    const token = await idp.token('alice');
    const exp = (await validator(settings()).validate(token)).exp as number;
    const justAfter = () => new Date((exp + 10) * 1000);
    await expect(validator(settings(), { now: justAfter }).validate(token)).resolves.toMatchObject({
      sub: 'alice',
    });
    const wellAfter = () => new Date((exp + 31) * 1000);
    await expect(validator(settings(), { now: wellAfter }).validate(token)).rejects.toThrow('expired');
  });

  it('refuses a token from another issuer even when the signature verifies', async () => {
    const s = settings({ issuer: 'https://idp.other.example', jwksUrl: idp.jwksUri });
    const err = await rejection(validator(s).validate(await idp.token('alice')));
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect(err.message).toBe('the token was issued by another issuer');
  });

  it('refuses a tampered token', async () => {
    const token = await idp.token('alice');
    const [h, p, sig] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.sub = 'mallory';
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
    const err = await rejection(validator(settings()).validate(forged));
    expect(err.message).toBe('the token signature is invalid');
  });

  it('refuses an unsigned (alg none) token', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({ sub: 'mallory', iss: idp.issuer, aud: idp.jwtResource, exp: 9e9 }),
    ).toString('base64url');
    const err = await rejection(validator(settings()).validate(`${header}.${payload}.AAAA`));
    expect(err).toBeInstanceOf(TokenRejectedError);
  });

  it('refuses garbage that is not a JWT when no introspection is configured', async () => {
    const err = await rejection(validator(settings()).validate('not-a-jwt'));
    expect(err.message).toBe('the token is not a JWT');
    const err2 = await rejection(validator(settings()).validate('aaa.bbb.ccc'));
    expect(err2).toBeInstanceOf(TokenRejectedError);
  });

  it('follows a key rotation: unknown kid → JWKS refetch → the new key verifies', async () => {
    const v = validator(settings(), { jwksCooldownMs: 0 });
    await v.validate(await idp.token('alice'));
    const fetchesBefore = idp.jwksFetches();
    await idp.rotateKeys();
    const rotated = await idp.token('alice');
    expect(JSON.parse(Buffer.from(rotated.split('.')[0] as string, 'base64url').toString()).kid).not.toBe(
      'key-1',
    );
    await expect(v.validate(rotated)).resolves.toMatchObject({ sub: 'alice' });
    expect(idp.jwksFetches()).toBe(fetchesBefore + 1);
    // The cached set now answers without another fetch.
    await v.validate(await idp.token('alice'));
    expect(idp.jwksFetches()).toBe(fetchesBefore + 1);
  });

  it('enforces configured scopes with insufficient_scope', async () => {
    const s = settings({ requiredScopes: ['mcp:admin'], scopesSupported: ['mcp:admin'] });
    const err = await rejection(validator(s).validate(await idp.token('alice', { scope: 'mcp:tools' })));
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect((err as TokenRejectedError).kind).toBe('insufficient_scope');
    await expect(
      validator(s).validate(await idp.token('alice', { scope: 'mcp:admin' })),
    ).resolves.toMatchObject({
      sub: 'alice',
    });
  });

  it('sends the --jwks-auth-token-file bearer on discovery and JWKS requests', async () => {
    const tokenFile = join(dir, 'jwks-token');
    await writeFile(tokenFile, 'jwks-secret-123\n');
    const resolved = await resolveInboundAuth({
      oidc_config: oidcConfigFor(idp),
      jwks_auth_token_file: tokenFile,
    });
    const seen = idp.idpAuthorizations().length;
    await validator(resolved!).validate(await idp.token('alice'));
    const sent = idp.idpAuthorizations().slice(seen);
    expect(sent.length).toBe(2);
    expect(sent).toEqual(['Bearer jwks-secret-123', 'Bearer jwks-secret-123']);
  });
});

describe('opaque tokens via RFC 7662 introspection', () => {
  const introspection = () =>
    settings({
      audience: idp.opaqueResource,
      introspectionUrl: idp.introspectionUrl,
      clientId: idp.introspector.clientId,
      clientSecret: idp.introspector.clientSecret,
    });

  it('accepts an active opaque token and reads its claims', async () => {
    const token = await idp.token('alice', { resource: idp.opaqueResource });
    expect(token.split('.').length).toBe(1);
    const claims = await validator(introspection()).validate(token);
    expect(identityFromClaims(claims)).toMatchObject({ subject: 'alice', groups: ['eng', 'admins'] });
  });

  it('reuses an active introspection result for a minute, never past exp, and not a refusal', async () => {
    const token = await idp.token('alice', { resource: idp.opaqueResource });
    let clock = Date.now();
    const v = validator(introspection(), { now: () => new Date(clock) });
    const before = idp.introspections();
    await v.validate(token);
    await v.validate(token);
    expect(idp.introspections()).toBe(before + 1);
    clock += 61_000;
    await v.validate(token);
    expect(idp.introspections()).toBe(before + 2);
    await expect(v.validate('never-issued')).rejects.toThrow('not active');
    await expect(v.validate('never-issued')).rejects.toThrow('not active');
    expect(idp.introspections()).toBe(before + 4);
    // An hour later the token has expired by its own exp, whatever the cache or the provider say.
    clock += 3_600_000;
    await expect(v.validate(token)).rejects.toThrow('expired');
  });

  it('refuses an unknown opaque token', async () => {
    const err = await rejection(validator(introspection()).validate('this-token-was-never-issued'));
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect(err.message).toBe('the token is not active');
  });

  it('refuses an opaque token for another audience', async () => {
    const token = await idp.token('alice', { resource: idp.opaqueResource });
    const err = await rejection(
      validator({ ...introspection(), audience: 'urn:someone-else' }).validate(token),
    );
    expect(err.message).toBe('the token was issued for another audience');
  });

  it('reports bad introspection credentials as an unavailable provider, not a bad token', async () => {
    const token = await idp.token('alice', { resource: idp.opaqueResource });
    const err = await rejection(validator({ ...introspection(), clientSecret: 'wrong' }).validate(token));
    expect(err).toBeInstanceOf(IdpUnavailableError);
    expect(err.message).toMatch(/HTTP 401/);
  });
});

describe('transport rules for identity-provider requests', () => {
  it('refuses an http issuer without --oidc-insecure-allow-http', async () => {
    await expect(
      resolveInboundAuth({ oidc_config: { Issuer: idp.issuer, AllowPrivateIP: true } }),
    ).rejects.toThrow(/--oidc-issuer: http:\/\/127\.0\.0\.1:\d+ uses plain http.*--oidc-insecure-allow-http/);
    await expect(
      resolveInboundAuth({
        oidc_config: { Issuer: idp.issuer, AllowPrivateIP: true, InsecureAllowHTTP: true },
      }),
    ).resolves.toMatchObject({ issuer: idp.issuer });
  });

  it('refuses a private-address JWKS URL at start without --jwks-allow-private-ip', async () => {
    await expect(
      resolveInboundAuth({ oidc_config: { JWKSURL: idp.jwksUri, InsecureAllowHTTP: true } }),
    ).rejects.toThrow(/--oidc-jwks-url: .* private or loopback address; add --jwks-allow-private-ip/);
  });

  it('refuses a host name that resolves to a private address, at connect time', async () => {
    const port = new URL(idp.issuer).port;
    const s = settings({
      issuer: undefined,
      jwksUrl: `http://localhost:${port}/jwks`,
      allowPrivateIp: false,
    });
    const before = idp.jwksFetches();
    const err = await rejection(validator(s).validate(await idp.token('alice')));
    expect(err).toBeInstanceOf(IdpUnavailableError);
    expect(err.message).toMatch(/localhost resolves to private address (127\.0\.0\.1|::1)/);
    expect(idp.jwksFetches()).toBe(before);
    // The same URL works once private addresses are allowed.
    await expect(
      validator({ ...s, allowPrivateIp: true }).validate(await idp.token('alice')),
    ).resolves.toMatchObject({
      sub: 'alice',
    });
  });

  it('refuses a discovered jwks_uri with a private address', async () => {
    const s = settings({ allowPrivateIp: false, issuer: `http://localhost:${new URL(idp.issuer).port}` });
    const err = await rejection(validator(s, { discoveryAttempts: 1 }).validate(await idp.token('alice')));
    expect(err).toBeInstanceOf(IdpUnavailableError);
    expect(err.message).toMatch(/private/);
  });

  it('retries discovery and reports an unreachable issuer', async () => {
    const s = settings({ issuer: 'http://127.0.0.1:1' });
    const err = await rejection(validator(s, { discoveryAttempts: 2 }).validate(await idp.token('alice')));
    expect(err).toBeInstanceOf(IdpUnavailableError);
    expect(err.message).toMatch(
      /OIDC discovery http:\/\/127\.0\.0\.1:1\/\.well-known\/openid-configuration unreachable/,
    );
  });

  it('reports an issuer without discovery (HTTP 404) as unavailable', async () => {
    const s = settings({ issuer: `${idp.issuer}/tenant` });
    const err = await rejection(validator(s, { discoveryAttempts: 1 }).validate(await idp.token('alice')));
    expect(err).toBeInstanceOf(IdpUnavailableError);
    expect(err.message).toMatch(/answered HTTP 404/);
  });

  it('trusts the --thv-ca-bundle CA for TLS to the identity provider, and only with it', async () => {
    const certs = makeCertificates(await mkdtemp(join(dir, 'tls-')));
    // An HTTPS front for the provider's real JWKS, with a certificate from a private CA.
    const https = createHttpsServer(
      { cert: await readFile(certs.certFile), key: await readFile(certs.keyFile) },
      (req, res) => {
        void fetch(idp.jwksUri).then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text());
        });
      },
    );
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    try {
      const jwksUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}/jwks`;
      const resolved = await resolveInboundAuth({
        oidc_config: { JWKSURL: jwksUrl, Issuer: idp.issuer, InsecureAllowHTTP: true, AllowPrivateIP: true },
        thv_ca_bundle: certs.caFile,
      });
      expect(resolved?.caBundle).toContain('-----BEGIN CERTIFICATE-----');
      const token = await idp.token('alice');
      await expect(validator(resolved!).validate(token)).resolves.toMatchObject({ sub: 'alice' });
      const untrusted = await rejection(validator({ ...resolved!, caBundle: undefined }).validate(token));
      expect(untrusted).toBeInstanceOf(IdpUnavailableError);
      expect(untrusted.message).toMatch(/certificate/i);
      const otherCa = await readFile(certs.otherCaFile, 'utf8');
      const wrong = await rejection(validator({ ...resolved!, caBundle: otherCa }).validate(token));
      expect(wrong).toBeInstanceOf(IdpUnavailableError);
    } finally {
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    }
  });

  it('explains missing pieces of the oidc config', async () => {
    await expect(resolveInboundAuth({ oidc_config: { Audience: 'x' } })).rejects.toThrow(
      /needs --oidc-issuer, --oidc-jwks-url or --oidc-introspection-url/,
    );
    await expect(resolveInboundAuth({ oidc_config: {} })).resolves.toBeUndefined();
    await expect(
      resolveInboundAuth({
        oidc_config: { Issuer: 'https://idp.example', ResourceURL: 'https://x/mcp?a=1' },
      }),
    ).rejects.toThrow(/--resource-url: .* must not have a query/);
    await expect(
      resolveInboundAuth({
        oidc_config: { Issuer: 'https://idp.example' },
        jwks_auth_token_file: join(dir, 'missing'),
      }),
    ).rejects.toThrow(/--jwks-auth-token-file: cannot read/);
  });
});

describe('the identity-provider HTTP client (size cap, timeout, no redirects)', () => {
  /** One loopback server with an answer per path; /hang never answers. */
  async function startIdpLike() {
    const server = createHttpServer((req, res) => {
      if (req.url === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}');
      else if (req.url === '/declared-large')
        res.writeHead(200, { 'content-length': '2000' }).end('x'.repeat(2000));
      else if (req.url === '/streamed-large') {
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 3; i++) res.write('x'.repeat(600));
        res.end();
      } else if (req.url === '/redirect') res.writeHead(302, { location: '/ok' }).end();
      // /hang: the request is read and never answered.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }

  function client(timeoutMs?: number): IdpHttpClient {
    const http = new IdpHttpClient({ allowHttp: true, allowPrivateIp: true, timeoutMs });
    clients.push(http);
    return http;
  }

  it('reads a JSON answer, and refuses one larger than the cap whether declared or streamed', async () => {
    const server = await startIdpLike();
    try {
      const http = client();
      await expect(
        http.readJson(await http.request(server.url('/ok'), 'JWKS'), 'JWKS', 1000),
      ).resolves.toEqual({
        a: 1,
      });
      for (const path of ['/declared-large', '/streamed-large']) {
        const answer = await http.request(server.url(path), 'JWKS');
        const err = await rejection(http.readJson(answer, 'JWKS', 1000));
        expect(err).toBeInstanceOf(IdpUnavailableError);
        expect(err.message).toBe('JWKS response is larger than 1000 bytes');
      }
    } finally {
      await server.close();
    }
  });

  it('gives up on a provider that does not answer, and does not follow a redirect', async () => {
    const server = await startIdpLike();
    try {
      const err = await rejection(client(200).request(server.url('/hang'), 'JWKS'));
      expect(err).toBeInstanceOf(IdpUnavailableError);
      expect(err.message).toBe(`JWKS ${server.url('/hang')} unreachable: timed out`);
      const redirected = await client().request(server.url('/redirect'), 'JWKS');
      expect(redirected.status).toBe(302);
    } finally {
      await server.close();
    }
  });
});

describe('the verification cache (same token bytes skip the signature check)', () => {
  it("never answers one user's token with another user's identity", async () => {
    const auth = createInboundAuth(settings(), { mcpPath: '/mcp', discoveryBackoffMs: 10 });
    try {
      const alice = `Bearer ${await idp.token('alice')}`;
      const bob = `Bearer ${await idp.token('bob')}`;
      for (let round = 0; round < 3; round++) {
        for (const [header, subject, groups] of [
          [alice, 'alice', ['eng', 'admins']],
          [bob, 'bob', ['viewer']],
        ] as const) {
          const outcome = await auth.authenticate(header, 'http://127.0.0.1:1');
          expect(outcome).toMatchObject({ identity: { subject, groups } });
        }
      }
    } finally {
      await auth.close();
    }
  });

  it('knows a remembered token without waiting only where authenticate() would accept it', async () => {
    let clock = Date.now();
    const auth = createInboundAuth(settings(), {
      mcpPath: '/mcp',
      discoveryBackoffMs: 10,
      clockToleranceSeconds: 0,
      now: () => new Date(clock),
    });
    try {
      const token = await idp.token('alice');
      const bob = await idp.token('bob');
      // Nothing is known before a full validation.
      expect(auth.rememberedIdentity(`Bearer ${token}`)).toBeUndefined();
      const outcome = await auth.authenticate(`Bearer ${token}`, 'http://127.0.0.1:1');
      if (!('identity' in outcome)) throw new Error('alice was refused');
      expect(auth.rememberedIdentity(`Bearer ${token}`)).toBe(outcome.identity);
      // Only the exact canonical header; anything else goes through authenticate().
      for (const header of [`bearer ${token}`, `Bearer  ${token}`, `Bearer ${token} `, token, undefined])
        expect(auth.rememberedIdentity(header)).toBeUndefined();
      // Another caller's token is never answered with alice's identity.
      expect(auth.rememberedIdentity(`Bearer ${bob}`)).toBeUndefined();
      await auth.authenticate(`Bearer ${bob}`, 'http://127.0.0.1:1');
      expect(auth.rememberedIdentity(`Bearer ${bob}`)).toMatchObject({ subject: 'bob' });
      expect(auth.rememberedIdentity(`Bearer ${token}`)).toMatchObject({ subject: 'alice' });
      // Expiry is checked on every call: past exp, the token must be validated again, and is refused.
      const { exp } = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as {
        exp: number;
      };
      clock = exp * 1000;
      expect(auth.rememberedIdentity(`Bearer ${token}`)).toBeUndefined();
      await expect(auth.authenticate(`Bearer ${token}`, 'http://127.0.0.1:1')).resolves.toMatchObject({
        refusal: { status: 401 },
      });
    } finally {
      await auth.close();
    }
  });

  it('never answers a token that only ends like a remembered one (same signature, other claims)', async () => {
    const v = validator(settings());
    const token = await idp.token('alice');
    expect(await v.validate(token)).toMatchObject({ sub: 'alice' });
    const [h, p, sig] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.sub = 'mallory';
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
    expect(forged.slice(-64)).toBe(token.slice(-64));
    expect(v.remembered(forged)).toBeUndefined();
    expect((await rejection(v.validate(forged))).message).toBe('the token signature is invalid');
    // The refusal leaves alice's remembered verification in place.
    expect(v.remembered(token)).toMatchObject({ sub: 'alice' });
  });

  it('never remembers a token that lacks the required scopes', async () => {
    const s = settings({ requiredScopes: ['mcp:admin'], scopesSupported: ['mcp:admin'] });
    const v = validator(s);
    const token = await idp.token('alice', { scope: 'mcp:tools' });
    for (let round = 0; round < 2; round++) {
      const err = await rejection(v.validate(token));
      expect((err as TokenRejectedError).kind).toBe('insufficient_scope');
      expect(v.remembered(token)).toBeUndefined();
    }
  });

  it('refuses a cached token once it has expired', async () => {
    let clock = Date.now();
    const v = validator(settings(), { now: () => new Date(clock), clockToleranceSeconds: 0 });
    const token = await idp.token('alice');
    await expect(v.validate(token)).resolves.toMatchObject({ sub: 'alice' });
    const { exp } = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as {
      exp: number;
    };
    clock = exp * 1000 + 1000;
    const err = await rejection(v.validate(token));
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect(err.message).toBe('the token has expired');
  });

  it('refuses a tampered copy of a cached token', async () => {
    const v = validator(settings());
    const token = await idp.token('alice');
    await v.validate(token);
    const [h, p, sig] = token.split('.') as [string, string, string];
    const flipped = `${sig.slice(0, -2)}${sig.endsWith('A') ? 'B' : 'A'}${sig.slice(-1)}`;
    const err = await rejection(v.validate(`${h}.${p}.${flipped}`));
    expect(err.message).toBe('the token signature is invalid');
    const forgedClaims = Buffer.from(JSON.stringify({ sub: 'mallory', exp: 4_000_000_000 })).toString(
      'base64url',
    );
    await expect(v.validate(`${h}.${forgedClaims}.${sig}`)).rejects.toThrow(TokenRejectedError);
  });

  it('stops accepting a cached token once the issuer withdraws its key from the JWKS', async () => {
    const jwks = await startKeySetServer();
    try {
      const s = settings({ issuer: undefined, jwksUrl: jwks.url, audience: 'https://mcp.test' });
      const v = validator(s, { jwksCooldownMs: 0 });
      const old = await jwks.sign('alice', 'old-key');
      await expect(v.validate(old)).resolves.toMatchObject({ sub: 'alice' });
      await expect(v.validate(old)).resolves.toMatchObject({ sub: 'alice' });
      // The issuer rotates and withdraws the old key; a token with the new kid makes the
      // validator fetch the key set again.
      expect(v.remembered(old)).toMatchObject({ sub: 'alice' });
      jwks.publishOnly('new-key');
      await expect(v.validate(await jwks.sign('bob', 'new-key'))).resolves.toMatchObject({ sub: 'bob' });
      expect(v.remembered(old)).toBeUndefined();
      const err = await rejection(v.validate(old));
      expect(err.message).toBe('no key of the issuer matches the token');
    } finally {
      await jwks.close();
    }
  });
});

/** A JWKS endpoint on loopback with named RS256 keys, publishing some of them. */
async function startKeySetServer() {
  const keys = new Map<string, { privateKey: CryptoKey; jwk: JWK }>();
  for (const kid of ['old-key', 'new-key']) {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    keys.set(kid, { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } });
  }
  let published = ['old-key'];
  const server = createHttpServer((_req, res) => {
    const body = JSON.stringify({ keys: published.map((kid) => keys.get(kid)!.jwk) });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    publishOnly(kid: string) {
      published = [kid];
    },
    sign: (subject: string, kid: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid })
        .setSubject(subject)
        .setAudience('https://mcp.test')
        .setExpirationTime('10m')
        .sign(keys.get(kid)!.privateKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
