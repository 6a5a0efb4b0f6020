/** The secrets manager: providers, the user and system views, and RunConfig references. */
export * from './types.js';
export {
  openSecretsProvider,
  secretsChildEnv,
  secretsProviderKind,
  encryptedSecretsPath,
} from './manager.js';
export { PROVIDER_ENV, PASSWORD_ENV } from './manager.js';
export { userSecrets, systemSecretName, type SystemScope } from './scoped.js';
export * from './refs.js';
