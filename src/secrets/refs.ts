/**
 * Secret references in a RunConfig ("NAME,target=TARGET") and their resolution at start. A secret
 * given as a flag value is stored under a system name owned by the workload and only the reference
 * goes into the RunConfig.
 */
import { SECRET_REF } from '../config/defaults.js';
import { runtimeError, usageError } from '../util/errors.js';
import { readOnly } from './environment.js';
import { systemSecretName, userSecrets } from './scoped.js';
import type { SecretsProvider } from './types.js';

export interface SecretRef {
  name: string;
  target: string;
}

export function parseSecretRef(ref: string, what = '--secret'): SecretRef {
  const match = SECRET_REF.exec(ref);
  if (!match) throw usageError(`invalid ${what} ${JSON.stringify(ref)}: use NAME,target=TARGET`);
  return { name: match[1] as string, target: match[2] as string };
}

/** Resolves --secret references into environment variables for the server (user names only). */
export async function resolveSecretEnv(
  refs: readonly string[] | undefined,
  provider: SecretsProvider,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  const user = userSecrets(provider);
  for (const ref of refs ?? []) {
    const { name, target } = parseSecretRef(ref);
    const value = await user.get(name);
    if (value === undefined) {
      throw runtimeError(
        `secret ${JSON.stringify(name)} (--secret ${ref}) is not in the ${provider.kind} secrets provider; add it with: moat secret set ${name}`,
      );
    }
    env[target] = value;
  }
  return env;
}

/** Resolves a reference Moat wrote itself (or one naming a user secret); `what` names the field for errors. */
export async function resolveSecretRef(
  ref: string,
  provider: SecretsProvider,
  what: string,
): Promise<string> {
  const { name } = parseSecretRef(ref, what);
  const value = await provider.get(name);
  if (value === undefined) {
    throw runtimeError(
      `the secret ${JSON.stringify(name)} referenced by ${what} is not in the ${provider.kind} secrets provider`,
    );
  }
  return value;
}

/** The secrets a workload can own, each with the target its reference carries. */
export const FLAG_SECRETS = {
  bearerToken: { prefix: 'BEARER_TOKEN', target: 'bearer_token', flag: '--remote-auth-bearer-token' },
  remoteClientSecret: {
    prefix: 'OAUTH_CLIENT_SECRET',
    target: 'oauth_secret',
    flag: '--remote-auth-client-secret',
  },
  tokenExchangeClientSecret: {
    prefix: 'TOKEN_EXCHANGE_CLIENT_SECRET',
    target: 'token_exchange_client_secret',
    flag: '--token-exchange-client-secret',
  },
  oidcClientSecret: {
    prefix: 'OIDC_CLIENT_SECRET',
    target: 'oidc_client_secret',
    flag: '--oidc-client-secret',
  },
} as const;
export type FlagSecret = keyof typeof FLAG_SECRETS;

export function flagSecretName(kind: FlagSecret, workload: string): string {
  return systemSecretName('workloads', `${FLAG_SECRETS[kind].prefix}_${workload}`);
}

/** Stores a secret given as a flag value and returns the reference to put in the RunConfig. */
export async function storeFlagSecret(
  provider: SecretsProvider,
  kind: FlagSecret,
  workload: string,
  value: string,
): Promise<string> {
  const spec = FLAG_SECRETS[kind];
  if (!provider.writable) {
    throw readOnly(
      provider.kind,
      `${spec.flag} needs a writable secrets provider to keep the value out of the RunConfig; use ${spec.flag}-file or MOAT_SECRETS_PROVIDER=encrypted`,
    );
  }
  const name = flagSecretName(kind, workload);
  await provider.set(name, value);
  return `${name},target=${spec.target}`;
}

/** Deletes every secret a workload owns (flag values); used when the workload is removed. */
export async function deleteFlagSecrets(provider: SecretsProvider, workload: string): Promise<void> {
  if (!provider.writable) return;
  for (const kind of Object.keys(FLAG_SECRETS) as FlagSecret[]) {
    await provider.delete(flagSecretName(kind, workload));
  }
}
