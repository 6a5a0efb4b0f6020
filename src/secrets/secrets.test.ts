import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EnvironmentSecretsProvider, NoSecretsProvider } from './environment.js';
import { openSecretsProvider, secretsChildEnv, secretsProviderKind } from './manager.js';
import { deleteFlagSecrets, resolveSecretEnv, resolveSecretRef, storeFlagSecret } from './refs.js';
import { systemSecretName, userSecrets } from './scoped.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'moat-home-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('provider choice', () => {
  it('defaults to encrypted, reads config.yaml, and lets MOAT_SECRETS_PROVIDER win', async () => {
    expect(await secretsProviderKind({ MOAT_HOME: home })).toBe('encrypted');
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(join(home, 'config', 'config.yaml'), 'secrets:\n  provider: environment\n');
    expect(await secretsProviderKind({ MOAT_HOME: home })).toBe('environment');
    expect(await secretsProviderKind({ MOAT_HOME: home, MOAT_SECRETS_PROVIDER: 'none' })).toBe('none');
  });

  it('names the source and the allowed values for an unknown provider', async () => {
    await expect(secretsProviderKind({ MOAT_HOME: home, MOAT_SECRETS_PROVIDER: 'vault' })).rejects.toThrow(
      'invalid secrets provider "vault" (MOAT_SECRETS_PROVIDER): use encrypted, environment, none',
    );
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(join(home, 'config', 'config.yaml'), 'secrets:\n  provider: keyring\n');
    await expect(secretsProviderKind({ MOAT_HOME: home })).rejects.toThrow(
      /secrets\.provider in .*config\.yaml/,
    );
  });

  it('needs a password when not on a terminal, and hands it to a child through the environment', async () => {
    const { Readable } = await import('node:stream');
    const noTty = Readable.from([]);
    const locked = await openSecretsProvider({ env: { MOAT_HOME: home }, input: noTty });
    await expect(locked.set('A', '1')).rejects.toThrow(/needs a password: set MOAT_SECRETS_PASSWORD/);
    const env = { MOAT_HOME: home, MOAT_SECRETS_PASSWORD: 'pw' };
    const provider = await openSecretsProvider({ env, input: noTty });
    await provider.set('A', '1');
    expect(await secretsChildEnv(provider)).toEqual({
      MOAT_SECRETS_PROVIDER: 'encrypted',
      MOAT_SECRETS_PASSWORD: 'pw',
    });
    const envProvider = await openSecretsProvider({ env: { MOAT_SECRETS_PROVIDER: 'environment' } });
    expect(await secretsChildEnv(envProvider)).toEqual({ MOAT_SECRETS_PROVIDER: 'environment' });
  });
});

describe('environment and none providers', () => {
  it('reads MOAT_SECRET_<NAME> and refuses writes', async () => {
    const p = new EnvironmentSecretsProvider({
      MOAT_SECRET_API_KEY: 'k',
      MOAT_SECRET_: 'ignored',
      OTHER: 'x',
    });
    expect(await p.get('API_KEY')).toBe('k');
    expect(await p.get('OTHER')).toBeUndefined();
    expect(await p.list()).toEqual(['API_KEY']);
    await expect(p.set('A', 'v')).rejects.toThrow(/environment secrets provider is read-only/);
  });

  it('none finds nothing and refuses writes', async () => {
    const p = new NoSecretsProvider();
    expect(await p.get('A')).toBeUndefined();
    await expect(p.set('A', 'v')).rejects.toThrow(/none secrets provider is read-only/);
  });
});

describe('user view and references', () => {
  const env = { MOAT_SECRET_TOKEN: 't0k', [`MOAT_SECRET_${systemSecretName('oauth', 'X')}`]: 'system' };

  it('hides and refuses system names', async () => {
    const user = userSecrets(new EnvironmentSecretsProvider(env));
    expect(await user.list()).toEqual(['TOKEN']);
    await expect(user.get('__moat_oauth_X')).rejects.toThrow(/reserved for moat/);
    await expect(user.get('bad name')).rejects.toThrow(/invalid secret name "bad name"/);
  });

  it('resolves --secret references into environment variables', async () => {
    const p = new EnvironmentSecretsProvider(env);
    expect(await resolveSecretEnv(['TOKEN,target=GITHUB_TOKEN'], p)).toEqual({ GITHUB_TOKEN: 't0k' });
    await expect(resolveSecretEnv(['MISSING,target=X'], p)).rejects.toThrow(
      /secret "MISSING" \(--secret MISSING,target=X\) is not in the environment secrets provider/,
    );
    await expect(resolveSecretEnv(['__moat_oauth_X,target=STEAL'], p)).rejects.toThrow(/reserved for moat/);
  });

  it('stores flag values under the workload and returns only a reference', async () => {
    const p = await openSecretsProvider({ env: { MOAT_HOME: home, MOAT_SECRETS_PASSWORD: 'pw' } });
    const ref = await storeFlagSecret(p, 'bearerToken', 'fetch', 'value-123');
    expect(ref).toBe('__moat_workloads_BEARER_TOKEN_fetch,target=bearer_token');
    expect(ref).not.toContain('value-123');
    expect(await resolveSecretRef(ref, p, 'remote_auth_config.bearer_token')).toBe('value-123');
    expect(await userSecrets(p).list()).toEqual([]);
    await deleteFlagSecrets(p, 'fetch');
    await expect(resolveSecretRef(ref, p, 'remote_auth_config.bearer_token')).rejects.toThrow(
      /referenced by remote_auth_config\.bearer_token is not in the encrypted secrets provider/,
    );
    await expect(storeFlagSecret(new NoSecretsProvider(), 'bearerToken', 'w', 'v')).rejects.toThrow(
      /--remote-auth-bearer-token needs a writable secrets provider/,
    );
  });
});
