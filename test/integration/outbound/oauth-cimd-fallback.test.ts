/**
 * CIMD refused: a real oidc-provider that advertises client ID metadata documents
 * (`client_id_metadata_document_supported`) but refuses Moat's URL client id at the authorization
 * endpoint with `invalid_client` (test/support/oauth-provider.ts `refuseCimd`). Moat falls back to
 * dynamic client registration once, logs in with it, and remembers for that issuer: the next
 * workload goes straight to the stored registration, never to the refused document again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamAuth } from '../../../src/auth/outbound/upstream-auth.js';
import { registrationSecretName } from '../../../src/auth/outbound/token-store.js';
import type { Identity } from '../../../src/mcp/identity.js';
import { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';
import { startOAuthProvider, type TestOAuthProvider } from '../../support/oauth-provider.js';
import { freePort } from '../../support/ports.js';
import {
  remoteAuthRunConfig,
  startServerTrusting,
  whoami,
  type ProtectedServer,
} from './protected-server.js';

const local: Identity = { subject: 'local', groups: [], claims: {}, local: true };
const METADATA_URL = 'https://client.example.test/moat.json';

let dir: string;
let op: TestOAuthProvider;
let remote: ProtectedServer;
let secrets: EncryptedSecretsProvider;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-cimd-'));
  secrets = new EncryptedSecretsProvider(join(dir, 'secrets_encrypted'), () => Promise.resolve('pw'));
  op = await startOAuthProvider({ refuseCimd: true });
  remote = await startServerTrusting(() => op);
});
afterAll(async () => {
  await remote?.close();
  await op?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Starts a workload's outbound auth; its "browser" logs in as `user`; returns the client ids used. */
async function start(workload: string, user: string) {
  const clientIds: Array<string | null> = [];
  const logins: Array<Promise<{ status: number; body: string }>> = [];
  const config = remoteAuthRunConfig(remote.url, workload, {
    client_metadata_url: METADATA_URL,
    callback_port: await freePort(),
  });
  const auth = await createUpstreamAuth(config, {
    secrets,
    notify: (message: string) => {
      const url = /https?:\/\/\S+$/.exec(message)?.[0];
      if (!url) return;
      clientIds.push(new URL(url).searchParams.get('client_id'));
      logins.push(op.login(url, user));
    },
  });
  return { auth: auth!, clientIds, logins: await Promise.all(logins) };
}

describe('a client ID metadata document the authorization server refuses', () => {
  it('the provider advertises CIMD support', async () => {
    const metadata = (await (await fetch(`${op.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
  });

  it('falls back to dynamic registration once, logs in with it, and marks the registration', async () => {
    const before = op.counts.registrations;
    const { auth, clientIds, logins } = await start('cimd-first', 'alice');
    expect(clientIds[0]).toBe(METADATA_URL);
    expect(logins[0]?.status).toBe(400); // the callback page of the refusal
    expect(clientIds).toHaveLength(2);
    expect(clientIds[1]).not.toBe(METADATA_URL);
    expect(op.counts.registrations).toBe(before + 1);
    expect((await whoami(remote.url, () => auth.headers(local))).subject).toBe('alice');
    const stored = JSON.parse((await secrets.get(registrationSecretName(op.issuer))) ?? '{}') as Record<
      string,
      unknown
    >;
    expect(stored).toMatchObject({ issuer: op.issuer, client_id: clientIds[1], cimdRefused: true });
  });

  it('remembers the refusal for the issuer: the next workload uses the registration, not the document', async () => {
    // Another callback port: the stored registration lacks its redirect URI, so one more is made.
    const { auth, clientIds } = await start('cimd-second', 'bob');
    expect(clientIds).toHaveLength(1);
    expect(clientIds[0]).not.toBe(METADATA_URL);
    expect((await whoami(remote.url, () => auth.headers(local))).subject).toBe('bob');
    // The new registration still carries the refusal, so a third workload skips the document too.
    const stored = JSON.parse((await secrets.get(registrationSecretName(op.issuer))) ?? '{}') as Record<
      string,
      unknown
    >;
    expect(stored).toMatchObject({ client_id: clientIds[0], cimdRefused: true });
  });
});
