import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncryptedSecretsProvider } from '../../secrets/encrypted.js';
import {
  forgetWorkloadTokens,
  legacyTokensSecretName,
  OAuthStore,
  tokensSecretName,
  type StoredTokens,
} from './token-store.js';

const A = { issuer: 'https://a.example', resource: 'https://mcp.example/mcp' };
const B = { issuer: 'https://b.example', resource: 'https://mcp.example/mcp' };
const tokens = (key: typeof A, access: string): StoredTokens => ({
  ...key,
  client_id: 'c',
  access_token: access,
});

let dir: string;
let secrets: EncryptedSecretsProvider;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-token-store-'));
  secrets = new EncryptedSecretsProvider(join(dir, 'secrets'), () => Promise.resolve('pw'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('OAuthStore tokens, keyed by workload, issuer and resource', () => {
  it('keeps two issuers apart: saving one never overwrites the other', async () => {
    const store = new OAuthStore(secrets);
    await store.saveTokens('w', tokens(A, 'from-a'));
    await store.saveTokens('w', tokens(B, 'from-b'));
    expect((await store.tokens('w', A))?.access_token).toBe('from-a');
    expect((await store.tokens('w', B))?.access_token).toBe('from-b');
    expect(await store.tokens('w', { issuer: 'https://a.example/', resource: A.resource })).toBeUndefined();
    expect(
      await store.tokens('w', { issuer: A.issuer, resource: 'https://other.example/mcp' }),
    ).toBeUndefined();
    await store.forgetTokens('w', A);
    expect(await store.tokens('w', A)).toBeUndefined();
    expect((await store.tokens('w', B))?.access_token).toBe('from-b');
  });

  it('moves an entry stored before the issuer keys to its key when it matches, and never hands it to another issuer', async () => {
    await secrets.set(legacyTokensSecretName('old'), JSON.stringify(tokens(A, 'legacy')));
    const store = new OAuthStore(secrets);
    expect(await store.tokens('old', B)).toBeUndefined();
    expect(await secrets.get(legacyTokensSecretName('old'))).toBeDefined();
    expect((await store.tokens('old', A))?.access_token).toBe('legacy');
    expect(await secrets.get(legacyTokensSecretName('old'))).toBeUndefined();
    expect(JSON.parse((await secrets.get(tokensSecretName('old', A)))!)).toMatchObject({
      access_token: 'legacy',
    });
  });

  it('forgets every entry of one workload, and only of that one', async () => {
    const store = new OAuthStore(secrets);
    await store.saveTokens('app', tokens(A, '1'));
    await store.saveTokens('app', tokens(B, '2'));
    await secrets.set(legacyTokensSecretName('app'), JSON.stringify(tokens(A, '0')));
    await store.saveTokens('app.b', tokens(A, '3'));
    await store.saveTokens('app_b', tokens(A, '4'));
    await forgetWorkloadTokens(secrets, 'app');
    expect(await store.tokens('app', A)).toBeUndefined();
    expect(await store.tokens('app', B)).toBeUndefined();
    expect((await store.tokens('app.b', A))?.access_token).toBe('3');
    expect((await store.tokens('app_b', A))?.access_token).toBe('4');
  });
});
