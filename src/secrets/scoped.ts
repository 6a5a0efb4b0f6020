/**
 * Two views of one provider. The user view (`moat secret`, --secret, header secrets) refuses and
 * hides system names, so a workload cannot be pointed at Moat's own OAuth tokens. System names are
 * `__moat_<scope>_<name>`.
 */
import { SYSTEM_PREFIX, validateUserSecretName, type SecretsProvider } from './types.js';

export type SystemScope = 'workloads' | 'oauth';

export function systemSecretName(scope: SystemScope, name: string): string {
  return `${SYSTEM_PREFIX}${scope}_${name}`;
}

export function userSecrets(provider: SecretsProvider): SecretsProvider {
  return {
    kind: provider.kind,
    writable: provider.writable,
    async get(name) {
      validateUserSecretName(name);
      return provider.get(name);
    },
    async set(name, value) {
      validateUserSecretName(name);
      return provider.set(name, value);
    },
    async delete(name) {
      validateUserSecretName(name);
      return provider.delete(name);
    },
    async list() {
      return (await provider.list()).filter((name) => !name.startsWith(SYSTEM_PREFIX));
    },
  };
}
