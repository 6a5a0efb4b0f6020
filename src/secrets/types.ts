/**
 * The secrets manager's contract. A provider stores named string values; which provider is in use
 * comes from MOAT_SECRETS_PROVIDER or config.yaml (see manager.ts). Names Moat manages itself
 * (OAuth tokens, client registrations, secrets given as flag values) live under a reserved prefix
 * that the user-facing view hides and refuses.
 */
import { usageError } from '../util/errors.js';

export const PROVIDER_KINDS = ['encrypted', 'environment', 'none'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export interface SecretsProvider {
  readonly kind: ProviderKind;
  /** False for read-only providers (environment, none): set and delete fail with a clear error. */
  readonly writable: boolean;
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string): Promise<void>;
  /** Resolves false when there was no such secret. */
  delete(name: string): Promise<boolean>;
  /** Names only, sorted; never values. */
  list(): Promise<string[]>;
}

/** Prefix of system-managed secrets; users can neither set nor reference these names. */
export const SYSTEM_PREFIX = '__moat_';

const NAME = /^[A-Za-z0-9_.-]{1,200}$/;

/** Checks a secret name a user typed (for `moat secret`, --secret and header secrets). */
export function validateUserSecretName(name: string, what = 'secret name'): void {
  if (!NAME.test(name)) {
    throw usageError(
      `invalid ${what} ${JSON.stringify(name)}: use 1 to 200 letters, digits, '_', '.' or '-'`,
    );
  }
  if (name.startsWith(SYSTEM_PREFIX)) {
    throw usageError(
      `invalid ${what} ${JSON.stringify(name)}: names starting with ${SYSTEM_PREFIX} are reserved for moat`,
    );
  }
}
