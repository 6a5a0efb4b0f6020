/**
 * RunConfig files: the JSON form `moat export` writes and `moat run --from-config` reads. The
 * format is ToolHive's (schema_version v0.1.0, same field names, same key order), so a config
 * exported by one tool runs in the other. Reading migrates older shapes, then validates; a bad
 * field is reported by its path and what is allowed.
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../util/atomic-file.js';
import { errorMessage, usageError } from '../util/errors.js';
import { clientTransport } from './derived.js';
import { describeIssues } from './issues.js';
import { TRANSPORTS, runConfigSchema, type RunConfig, type Transport } from './runconfig.js';
import { isObject } from '../util/is-object.js';

/**
 * Old ToolHive configs wrote remote_auth_config without JSON tags (Go field names); current
 * ones use snake_case. Both are read.
 */
const LEGACY_REMOTE_AUTH_KEYS: Readonly<Record<string, string>> = {
  ClientID: 'client_id',
  ClientSecret: 'client_secret',
  ClientSecretFile: 'client_secret_file',
  Scopes: 'scopes',
  SkipBrowser: 'skip_browser',
  Timeout: 'timeout',
  CallbackPort: 'callback_port',
  UsePKCE: 'use_pkce',
  Resource: 'resource',
  Issuer: 'issuer',
  AuthorizeURL: 'authorize_url',
  TokenURL: 'token_url',
  Headers: 'headers',
  EnvVars: 'env_vars',
  OAuthParams: 'oauth_params',
  ScopeParamName: 'scope_param_name',
  BearerToken: 'bearer_token',
  BearerTokenFile: 'bearer_token_file',
};

/** Brings older shapes up to the current one (pure; the input is not modified). */
export function migrateRunConfig(data: unknown): unknown {
  if (!isObject(data)) return data;
  const out: Record<string, unknown> = { ...data };
  // proxy_mode is written out as the proxy serves it: for HTTP transports it is the transport (as ToolHive reads it).
  if (TRANSPORTS.includes(out.transport as Transport))
    out.proxy_mode = clientTransport(out as Pick<RunConfig, 'transport' | 'proxy_mode'>);
  const remote = out.remote_auth_config;
  if (isObject(remote)) {
    out.remote_auth_config = Object.fromEntries(
      Object.entries(remote).map(([key, value]) => [LEGACY_REMOTE_AUTH_KEYS[key] ?? key, value]),
    );
  }
  return out;
}

/** Validates a parsed RunConfig document; `source` names it in errors. */
export function parseRunConfig(data: unknown, source: string): RunConfig {
  if (!isObject(data)) throw usageError(`${source}: a run configuration must be a JSON object`);
  const result = runConfigSchema.safeParse(migrateRunConfig(data));
  if (!result.success)
    throw usageError(`${source}: invalid run configuration: ${describeIssues(result.error)}`);
  return result.data;
}

export async function readRunConfigFile(path: string): Promise<RunConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(`cannot read run configuration ${path}: ${errorMessage(err)}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text) as unknown;
  } catch (err) {
    throw usageError(`${path}: not valid JSON: ${errorMessage(err)}`);
  }
  return parseRunConfig(data, path);
}

/** Keys in ToolHive's order (the schema's order), empty optional values left out. */
export function serializeRunConfig(config: RunConfig): string {
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(runConfigSchema.shape)) {
    const value = (config as Record<string, unknown>)[key];
    if (value !== undefined) ordered[key] = value;
  }
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** Writes pretty JSON atomically with mode 0600 (a RunConfig may name secret references). */
export async function writeRunConfigFile(path: string, config: RunConfig): Promise<void> {
  await writeFileAtomic(path, serializeRunConfig(config), 0o600);
}
