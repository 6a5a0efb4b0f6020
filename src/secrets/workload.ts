/**
 * What starting a workload needs from the secrets manager. `moat run`/`moat start` call
 * prepareWorkloadSecrets in the terminal's process: it may ask for the password, stores secrets
 * given as flag values, checks that every reference resolves (so a detached start fails here,
 * visibly, rather than in a log), and returns the environment the detached supervisor needs to
 * open the same provider without a prompt. The supervisor then calls workloadSecretEnv.
 */
import { SECRET_REF } from '../config/defaults.js';
import type { RunConfig } from '../config/runconfig.js';
import { runtimeError } from '../util/errors.js';
import { openSecretsProvider, secretsChildEnv, type OpenSecretsOptions } from './manager.js';
import { resolveSecretEnv, resolveSecretRef, storeFlagSecret, type FlagSecret } from './refs.js';
import { userSecrets } from './scoped.js';
import type { SecretsProvider } from './types.js';

export interface SecretToStore {
  kind: FlagSecret;
  value: string;
}

/** Every secret reference of a RunConfig other than --secret, with the field it came from. */
function credentialRefs(config: RunConfig): Array<{ ref: string; field: string }> {
  const refs: Array<{ ref: string; field: string }> = [];
  const add = (ref: string | undefined, field: string): void => {
    if (ref && SECRET_REF.test(ref)) refs.push({ ref, field });
  };
  add(config.remote_auth_config?.client_secret, 'remote_auth_config.client_secret');
  add(config.remote_auth_config?.bearer_token, 'remote_auth_config.bearer_token');
  add(config.token_exchange_config?.client_secret, 'token_exchange_config.client_secret');
  add(config.oidc_config?.ClientSecret, 'oidc_config.ClientSecret');
  return refs;
}

/** True when starting this workload reads or writes the secrets manager. */
export function usesSecrets(config: RunConfig, toStore: readonly SecretToStore[] = []): boolean {
  const auth = config.remote_auth_config;
  const oauth = Boolean(
    config.remote_url && auth && (auth.enabled || auth.issuer || auth.authorize_url || auth.client_id),
  );
  return (
    toStore.length > 0 ||
    (config.secrets?.length ?? 0) > 0 ||
    Object.keys(config.header_forward?.add_headers_from_secret ?? {}).length > 0 ||
    credentialRefs(config).length > 0 ||
    oauth
  );
}

/**
 * Stores flag-value secrets, checks every reference, and returns the environment for a detached
 * supervisor (empty when the workload uses no secrets).
 */
export async function prepareWorkloadSecrets(
  config: RunConfig,
  toStore: readonly SecretToStore[] = [],
  options: OpenSecretsOptions = {},
): Promise<{ provider?: SecretsProvider; childEnv: Record<string, string> }> {
  if (!usesSecrets(config, toStore)) return { childEnv: {} };
  const provider = await openSecretsProvider(options);
  for (const { kind, value } of toStore) await storeFlagSecret(provider, kind, config.name, value);
  await resolveSecretEnv(config.secrets, provider);
  for (const { ref, field } of credentialRefs(config)) await resolveSecretRef(ref, provider, field);
  const user = userSecrets(provider);
  for (const [header, name] of Object.entries(config.header_forward?.add_headers_from_secret ?? {})) {
    if ((await user.get(name)) === undefined) {
      throw runtimeError(
        `secret ${JSON.stringify(name)} for header ${header} (--remote-forward-headers-secret) is not in the ${provider.kind} secrets provider; add it with: moat secret set ${name}`,
      );
    }
  }
  return { provider, childEnv: await secretsChildEnv(provider) };
}

/** The --secret environment variables of a workload's server (supervisor side, no prompt). */
export async function workloadSecretEnv(
  config: RunConfig,
  options: OpenSecretsOptions = {},
): Promise<Record<string, string>> {
  if (!config.secrets?.length) return {};
  return resolveSecretEnv(config.secrets, await openSecretsProvider(options));
}
