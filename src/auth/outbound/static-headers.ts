/**
 * Credentials that do not change per request: a bearer token (secret reference, file, or
 * MOAT_REMOTE_AUTH_BEARER_TOKEN) and forwarded headers, literal or from the secrets manager. Secret
 * values are resolved once at start and only ever live in memory.
 */
import { forwardHeaderNameProblem } from '../../config/header-names.js';
import type { RunConfig } from '../../config/runconfig.js';
import { resolveSecretRef } from '../../secrets/refs.js';
import { userSecrets } from '../../secrets/scoped.js';
import type { SecretsProvider } from '../../secrets/types.js';
import { runtimeError, usageError } from '../../util/errors.js';
import { readSecretFile } from './oauth-settings.js';

export const BEARER_TOKEN_ENV = 'MOAT_REMOTE_AUTH_BEARER_TOKEN';

/** Checks a header name given to --remote-forward-headers(-secret) or --token-exchange-header-name. */
export function validateForwardHeaderName(name: string, flag: string): void {
  const problem = forwardHeaderNameProblem(name);
  if (problem) throw usageError(`${flag}: ${problem}`);
}

function checkValue(name: string, value: string, flag: string): string {
  if (/[\r\n\0]/.test(value)) throw usageError(`${flag}: the value of ${name} contains a line break or NUL`);
  return value;
}

export async function resolveBearerToken(
  config: RunConfig,
  secrets: SecretsProvider,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const auth = config.remote_auth_config;
  if (auth?.bearer_token) return resolveSecretRef(auth.bearer_token, secrets, '--remote-auth-bearer-token');
  if (auth?.bearer_token_file)
    return readSecretFile(auth.bearer_token_file, '--remote-auth-bearer-token-file');
  return env[BEARER_TOKEN_ENV] || undefined;
}

/** All static headers for upstream requests (forwarded headers, then the bearer token). */
export async function resolveStaticHeaders(
  config: RunConfig,
  secrets: SecretsProvider,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  const forward = config.header_forward;
  for (const [name, value] of Object.entries(forward?.add_plaintext_headers ?? {})) {
    validateForwardHeaderName(name, '--remote-forward-headers');
    headers[name] = checkValue(name, value, '--remote-forward-headers');
  }
  const user = userSecrets(secrets);
  for (const [name, secretName] of Object.entries(forward?.add_headers_from_secret ?? {})) {
    validateForwardHeaderName(name, '--remote-forward-headers-secret');
    const value = await user.get(secretName);
    if (value === undefined) {
      throw runtimeError(
        `secret ${JSON.stringify(secretName)} for header ${name} (--remote-forward-headers-secret) is not in the ${secrets.kind} secrets provider`,
      );
    }
    headers[name] = checkValue(name, value, '--remote-forward-headers-secret');
  }
  const bearer = await resolveBearerToken(config, secrets, env);
  if (bearer)
    headers.Authorization = `Bearer ${checkValue('Authorization', bearer, '--remote-auth-bearer-token')}`;
  return headers;
}
