/**
 * CIMD refused: a real oidc-provider that advertises client ID metadata documents
 * (`client_id_metadata_document_supported`) but refuses Moat's URL client id at the authorization
 * endpoint with `invalid_client` (test/support/oauth-provider.ts `refuseCimd`). Moat falls back to
 * dynamic client registration once, logs in with it, and remembers for that issuer: the next
 * workload goes straight to the stored registration, never to the refused document again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamAuth } from '../../../src/auth/outbound/upstream-auth.js';
import type { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';
import { startOAuthProvider, type TestOAuthProvider } from '../../support/oauth-provider.js';
import { freePort } from '../../support/ports.js';
import {
  headlessBrowser,
  localSubject,
  remoteAuthRunConfig,
  scratchSecrets,
  startServerTrusting,
  storedRegistration,
  type ProtectedServer,
} from './protected-server.js';

const METADATA_URL = 'https://client.example.test/moat.json';

let scratch: Awaited<ReturnType<typeof scratchSecrets>>;
let secrets: EncryptedSecretsProvider;
let op: TestOAuthProvider;
let remote: ProtectedServer;

beforeAll(async () => {
  scratch = await scratchSecrets('moat-cimd-');
  secrets = scratch.secrets;
  op = await startOAuthProvider({ refuseCimd: true });
  remote = await startServerTrusting(() => op);
});
afterAll(async () => {
  await remote?.close();
  await op?.close();
  await scratch?.remove();
});

/** Starts a workload's outbound auth; its "browser" logs in as `user`; returns the client ids used. */
async function start(workload: string, user: string) {
  const browser = headlessBrowser((url) => op.login(url, user));
  const config = remoteAuthRunConfig(remote.url, workload, {
    client_metadata_url: METADATA_URL,
    callback_port: await freePort(),
  });
  const auth = await createUpstreamAuth(config, { secrets, notify: browser.notify });
  return {
    auth,
    clientIds: browser.urls.map((url) => url.searchParams.get('client_id')),
    logins: await Promise.all(browser.logins),
  };
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
    expect(await localSubject(remote.url, auth)).toBe('alice');
    const stored = await storedRegistration(secrets, op.issuer);
    expect(stored).toMatchObject({ issuer: op.issuer, client_id: clientIds[1], cimdRefused: true });
  });

  it('remembers the refusal for the issuer: the next workload uses the registration, not the document', async () => {
    // Another callback port: the stored registration lacks its redirect URI, so one more is made.
    const { auth, clientIds } = await start('cimd-second', 'bob');
    expect(clientIds).toHaveLength(1);
    expect(clientIds[0]).not.toBe(METADATA_URL);
    expect(await localSubject(remote.url, auth)).toBe('bob');
    // The new registration still carries the refusal, so a third workload skips the document too.
    const stored = await storedRegistration(secrets, op.issuer);
    expect(stored).toMatchObject({ client_id: clientIds[0], cimdRefused: true });
  });
});
