import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runConfigSchema, type RunConfigInput } from '../config/runconfig.js';
import { openSecretsProvider } from './manager.js';
import { prepareWorkloadSecrets, usesSecrets, workloadSecretEnv } from './workload.js';

let home: string;
let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'moat-wl-secrets-'));
  env = { MOAT_HOME: home, MOAT_SECRETS_PASSWORD: 'pw' };
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const config = (extra: Partial<RunConfigInput> = {}) =>
  runConfigSchema.parse({
    image: 'img',
    name: 'wl',
    transport: 'stdio',
    host: '127.0.0.1',
    port: 0,
    ...extra,
  });

describe('workload secrets', () => {
  it('does not touch the provider when the workload uses no secrets', async () => {
    expect(usesSecrets(config())).toBe(false);
    expect(await prepareWorkloadSecrets(config(), [], { env: { MOAT_HOME: home } })).toEqual({
      childEnv: {},
    });
  });

  it('stores flag values, checks references, and hands the password to the supervisor by environment', async () => {
    const provider = await openSecretsProvider({ env });
    await provider.set('GH', 'ghp_x');
    const cfg = config({
      secrets: ['GH,target=GITHUB_TOKEN'],
      remote_auth_config: { bearer_token: '__moat_workloads_BEARER_TOKEN_wl,target=bearer_token' },
    });
    const { childEnv } = await prepareWorkloadSecrets(cfg, [{ kind: 'bearerToken', value: 'tok' }], { env });
    expect(childEnv).toEqual({ MOAT_SECRETS_PROVIDER: 'encrypted', MOAT_SECRETS_PASSWORD: 'pw' });
    expect(await provider.get('__moat_workloads_BEARER_TOKEN_wl')).toBe('tok');
    expect(await workloadSecretEnv(cfg, { env: { MOAT_HOME: home, ...childEnv } })).toEqual({
      GITHUB_TOKEN: 'ghp_x',
    });
  });

  it('fails before starting when a reference does not resolve', async () => {
    await expect(prepareWorkloadSecrets(config({ secrets: ['NOPE,target=X'] }), [], { env })).rejects.toThrow(
      /secret "NOPE" \(--secret NOPE,target=X\) is not in the encrypted secrets provider; add it with: moat secret set NOPE/,
    );
    await expect(
      prepareWorkloadSecrets(
        config({ header_forward: { add_headers_from_secret: { 'X-Key': 'MISSING' } } }),
        [],
        {
          env,
        },
      ),
    ).rejects.toThrow(/secret "MISSING" for header X-Key/);
  });
});
