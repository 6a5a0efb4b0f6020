/**
 * The `environment` provider (read-only): secret NAME is the value of MOAT_SECRET_<NAME>. Useful in
 * CI and containers, where a secret store is injected as environment variables.
 */
import { usageError } from '../util/errors.js';
import type { SecretsProvider } from './types.js';

export const ENV_PREFIX = 'MOAT_SECRET_';

export class EnvironmentSecretsProvider implements SecretsProvider {
  readonly kind = 'environment';
  readonly writable = false;

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  get(name: string): Promise<string | undefined> {
    return Promise.resolve(this.env[`${ENV_PREFIX}${name}`]);
  }

  list(): Promise<string[]> {
    const names = Object.keys(this.env)
      .filter((key) => key.startsWith(ENV_PREFIX) && key.length > ENV_PREFIX.length)
      .map((key) => key.slice(ENV_PREFIX.length));
    return Promise.resolve(names.sort());
  }

  set(_name: string, _value: string): Promise<void> {
    return Promise.reject(
      readOnly('environment', `set the environment variable ${ENV_PREFIX}<NAME> instead`),
    );
  }

  delete(_name: string): Promise<boolean> {
    return Promise.reject(
      readOnly('environment', `unset the environment variable ${ENV_PREFIX}<NAME> instead`),
    );
  }
}

/** `none`: secrets are switched off; reads find nothing and writes fail. */
export class NoSecretsProvider implements SecretsProvider {
  readonly kind = 'none';
  readonly writable = false;

  get(_name: string): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  list(): Promise<string[]> {
    return Promise.resolve([]);
  }

  set(_name: string, _value: string): Promise<void> {
    return Promise.reject(readOnly('none', 'choose MOAT_SECRETS_PROVIDER=encrypted to store secrets'));
  }

  delete(_name: string): Promise<boolean> {
    return Promise.reject(readOnly('none', 'choose MOAT_SECRETS_PROVIDER=encrypted to store secrets'));
  }
}

export function readOnly(kind: string, hint: string): Error {
  return usageError(`the ${kind} secrets provider is read-only: ${hint}`);
}
