/**
 * Static credentials and token exchange, seen by a real MCP server: a bearer token and forwarded
 * headers (literal and from the secrets manager) on every request, and RFC 8693 exchange of the
 * caller's token at a real oidc-provider, cached per caller until near expiry.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamAuth } from '../../../src/auth/outbound/upstream-auth.js';
import { runConfigSchema, type RunConfig, type RunConfigInput } from '../../../src/config/runconfig.js';
import { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';
import { storeFlagSecret } from '../../../src/secrets/refs.js';
import { startOAuthProvider, type TestOAuthProvider } from '../../support/oauth-provider.js';
import { startProtectedServer, tokenFrom, whoami, type ProtectedServer } from './protected-server.js';
import type { Identity } from '../../../src/mcp/identity.js';

let dir: string;
let op: TestOAuthProvider;
let secrets: EncryptedSecretsProvider;

const identity = (subject: string, token?: string): Identity => ({
  subject,
  groups: [],
  claims: { sub: subject },
  local: false,
  token,
});

function config(remoteUrl: string, extra: Partial<RunConfigInput>): RunConfig {
  return runConfigSchema.parse({
    image: remoteUrl,
    remote_url: remoteUrl,
    name: `hdr-${Math.random().toString(36).slice(2, 8)}`,
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 0,
    ...extra,
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-outbound-hdr-'));
  secrets = new EncryptedSecretsProvider(join(dir, 'secrets_encrypted'), () => Promise.resolve('pw'));
  op = await startOAuthProvider();
});

afterAll(async () => {
  await op?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('static credentials', () => {
  let remote: ProtectedServer;
  beforeAll(async () => {
    remote = await startProtectedServer({
      check: (authorization) =>
        Promise.resolve(authorization === 'Bearer static-token-123' ? 'static' : undefined),
    });
  });
  afterAll(() => remote.close());

  it('sends the bearer token and forwarded headers on every request', async () => {
    await secrets.set('TEAM_API_KEY', 'key-from-secrets');
    const cfg = config(remote.url, {
      name: 'static-hdr',
      remote_auth_config: {
        bearer_token: await storeFlagSecret(secrets, 'bearerToken', 'static-hdr', 'static-token-123'),
      },
      header_forward: {
        add_plaintext_headers: { 'X-Team': 'blue, green' },
        add_headers_from_secret: { 'X-Api-Key': 'TEAM_API_KEY' },
      },
    });
    expect(JSON.stringify(cfg)).not.toContain('static-token-123');
    const auth = await createUpstreamAuth(cfg, { secrets });
    const result = await whoami(remote.url, () => auth!.headers(identity('anyone', 'inbound-token')));
    expect(result.subject).toBe('static');
    expect(result.headers['x-team']).toBe('blue, green');
    expect(result.headers['x-api-key']).toBe('key-from-secrets');
    // Every request of the MCP session carried them (initialize, initialized, tools/call).
    expect(remote.seen.length).toBeGreaterThanOrEqual(3);
    for (const headers of remote.seen) {
      expect(headers.authorization).toBe('Bearer static-token-123');
      expect(headers['x-api-key']).toBe('key-from-secrets');
    }
    expect('onUnauthorized' in auth!).toBe(false);
  });

  it('reads the bearer token from a file, and rejects bad header configurations by name', async () => {
    const file = join(dir, 'bearer');
    await writeFile(file, 'static-token-123\n');
    const auth = await createUpstreamAuth(
      config(remote.url, { remote_auth_config: { bearer_token_file: file } }),
      {
        secrets,
      },
    );
    expect(await auth!.headers(identity('x'))).toEqual({ Authorization: 'Bearer static-token-123' });

    await expect(
      createUpstreamAuth(
        config(remote.url, { header_forward: { add_plaintext_headers: { Host: 'evil' } } }),
        {
          secrets,
        },
      ),
    ).rejects.toThrow('--remote-forward-headers: the Host header cannot be set');
    await expect(
      createUpstreamAuth(
        config(remote.url, { header_forward: { add_headers_from_secret: { 'X-K': 'NOPE' } } }),
        {
          secrets,
        },
      ),
    ).rejects.toThrow(
      /secret "NOPE" for header X-K \(--remote-forward-headers-secret\) is not in the encrypted/,
    );
    await expect(
      createUpstreamAuth(
        config(remote.url, { remote_auth_config: { enabled: true, bearer_token_file: file } }),
        { secrets },
      ),
    ).rejects.toThrow(/cannot be combined with a bearer token/);
  });
});

describe('token exchange', () => {
  let remote: ProtectedServer;
  let secretFile: string;
  beforeAll(async () => {
    remote = await startProtectedServer({
      check: tokenFrom(op),
    });
    secretFile = join(dir, 'te-secret');
    await writeFile(secretFile, `${op.exchangeClient.clientSecret}\n`);
  });
  afterAll(() => remote.close());

  const exchangeConfig = (extra: Record<string, unknown> = {}) =>
    config(remote.url, {
      oidc_config: { Issuer: op.issuer, Audience: op.inboundAudience },
      token_exchange_config: {
        token_url: `${op.issuer}/token`,
        client_id: op.exchangeClient.clientId,
        client_secret_file: secretFile,
        audience: remote.url,
        scopes: ['mcp:tools'],
        ...extra,
      },
    });

  it('exchanges the caller token for one the remote accepts, once per caller until near expiry', async () => {
    let offset = 0;
    const auth = await createUpstreamAuth(exchangeConfig(), { secrets, now: () => Date.now() + offset });
    const alice = identity('alice', await op.inboundToken('alice'));
    const bob = identity('bob', await op.inboundToken('bob'));
    const start = op.counts.exchanges;

    const [first, concurrent] = await Promise.all([auth!.headers(alice), auth!.headers(alice)]);
    expect(concurrent).toEqual(first);
    expect(op.counts.exchanges).toBe(start + 1);
    const exchanged = first.Authorization!.replace('Bearer ', '');
    expect(exchanged).not.toBe(alice.token);
    expect(await op.verify(exchanged, remote.url)).toMatchObject({ sub: 'alice', aud: remote.url });

    expect((await whoami(remote.url, () => auth!.headers(alice))).subject).toBe('alice');
    expect(op.counts.exchanges).toBe(start + 1);
    expect((await whoami(remote.url, () => auth!.headers(bob))).subject).toBe('bob');
    expect(op.counts.exchanges).toBe(start + 2);

    offset = 600_000; // past the exchanged token's lifetime: exchanged again
    await auth!.headers(alice);
    expect(op.counts.exchanges).toBe(start + 3);
  });

  it('puts the token in --token-exchange-header-name when given', async () => {
    const auth = await createUpstreamAuth(
      exchangeConfig({ external_token_header_name: 'X-Upstream-Token' }),
      {
        secrets,
      },
    );
    const headers = await auth!.headers(identity('alice', await op.inboundToken('alice')));
    expect(Object.keys(headers)).toEqual(['X-Upstream-Token']);
    expect(headers['X-Upstream-Token']).toMatch(/^Bearer /);
  });

  it('names a refused exchange, a missing caller token, and a missing inbound authentication', async () => {
    const wrong = join(dir, 'te-wrong');
    await writeFile(wrong, 'not-the-secret');
    const bad = await createUpstreamAuth(exchangeConfig({ client_secret_file: wrong }), { secrets });
    await expect(bad!.headers(identity('alice', await op.inboundToken('alice')))).rejects.toThrow(
      /refused to exchange the caller's token: invalid_client/,
    );
    const auth = await createUpstreamAuth(exchangeConfig(), { secrets });
    await expect(auth!.headers(identity('local'))).rejects.toThrow(/needs the caller's validated token/);
    await expect(
      createUpstreamAuth(config(remote.url, { token_exchange_config: { token_url: `${op.issuer}/token` } }), {
        secrets,
      }),
    ).rejects.toThrow(/--token-exchange-url needs inbound authentication/);
  });
});
