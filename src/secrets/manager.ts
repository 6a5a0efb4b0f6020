/**
 * Chooses and opens the secrets provider: MOAT_SECRETS_PROVIDER wins, then `secrets.provider` in
 * config.yaml (config dir), then `encrypted`. The encrypted provider's password comes from
 * MOAT_SECRETS_PASSWORD or a hidden prompt on a terminal; a detached supervisor gets it through its
 * environment (secretsChildEnv), never through its arguments.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runtimeError, usageError } from '../util/errors.js';
import { moatDirs } from '../util/paths.js';
import { EncryptedSecretsProvider } from './encrypted.js';
import { EnvironmentSecretsProvider, NoSecretsProvider } from './environment.js';
import { isInteractive, promptHidden } from './prompt.js';
import { PROVIDER_KINDS, type ProviderKind, type SecretsProvider } from './types.js';

export const PROVIDER_ENV = 'MOAT_SECRETS_PROVIDER';
export const PASSWORD_ENV = 'MOAT_SECRETS_PASSWORD';

export interface OpenSecretsOptions {
  env?: NodeJS.ProcessEnv;
  /** Where a password prompt reads from; prompting happens only when this is a terminal. */
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

function checkKind(value: string, source: string): ProviderKind {
  if ((PROVIDER_KINDS as readonly string[]).includes(value)) return value as ProviderKind;
  throw usageError(
    `invalid secrets provider ${JSON.stringify(value)} (${source}): use ${PROVIDER_KINDS.join(', ')}`,
  );
}

export async function secretsProviderKind(env: NodeJS.ProcessEnv = process.env): Promise<ProviderKind> {
  const fromEnv = env[PROVIDER_ENV];
  if (fromEnv) return checkKind(fromEnv, PROVIDER_ENV);
  const configPath = join(moatDirs(env).config, 'config.yaml');
  let text: string;
  try {
    text = await readFile(configPath, 'utf8');
  } catch {
    return 'encrypted';
  }
  let config: unknown;
  try {
    // Loaded only when there is a config.yaml: most processes (supervisors included) never need it.
    const { parse } = await import('yaml');
    config = parse(text);
  } catch (err) {
    throw usageError(`cannot parse ${configPath}: ${(err as Error).message}`);
  }
  const provider = (config as { secrets?: { provider?: unknown } } | null)?.secrets?.provider;
  if (provider === undefined) return 'encrypted';
  return checkKind(
    typeof provider === 'string' ? provider : JSON.stringify(provider),
    `secrets.provider in ${configPath}`,
  );
}

export function encryptedSecretsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(moatDirs(env).data, 'secrets_encrypted');
}

/** How each encrypted provider gets its password (asked at most once), for secretsChildEnv. */
const passwords = new WeakMap<SecretsProvider, () => Promise<string>>();

export async function openSecretsProvider(options: OpenSecretsOptions = {}): Promise<SecretsProvider> {
  const env = options.env ?? process.env;
  const kind = await secretsProviderKind(env);
  if (kind === 'environment') return new EnvironmentSecretsProvider(env);
  if (kind === 'none') return new NoSecretsProvider();
  const path = encryptedSecretsPath(env);
  let password: Promise<string> | undefined;
  const getPassword = (): Promise<string> => (password ??= obtainPassword(path, env, options));
  const provider = new EncryptedSecretsProvider(path, getPassword);
  passwords.set(provider, getPassword);
  return provider;
}

async function obtainPassword(
  path: string,
  env: NodeJS.ProcessEnv,
  options: OpenSecretsOptions,
): Promise<string> {
  const fromEnv = env[PASSWORD_ENV];
  if (fromEnv) return fromEnv;
  const input = options.input ?? process.stdin;
  if (!isInteractive(input)) {
    throw runtimeError(
      `the encrypted secrets provider needs a password: set ${PASSWORD_ENV}, or run moat on a terminal to be asked for it`,
    );
  }
  const output = options.output ?? process.stderr;
  const first = await promptHidden('Secrets password: ', input, output);
  if (!first) throw usageError('the secrets password must not be empty');
  if (!existsSync(path)) {
    const again = await promptHidden('Repeat the password (it creates a new secrets file): ', input, output);
    if (again !== first) throw usageError('the two passwords do not match; nothing was stored');
  }
  return first;
}

/**
 * Environment for a child moat process (the detached supervisor) so it opens the same provider
 * without prompting. Asks for the password now if it is not known yet.
 */
export async function secretsChildEnv(provider: SecretsProvider): Promise<Record<string, string>> {
  const env: Record<string, string> = { [PROVIDER_ENV]: provider.kind };
  const password = passwords.get(provider);
  if (password) env[PASSWORD_ENV] = await password();
  return env;
}
