/**
 * What the RunConfig says about OAuth to the remote server, checked and normalised (pure, apart
 * from reading a client-secret file or secret). Times are milliseconds.
 */
import { readFile } from 'node:fs/promises';
import { DEFAULTS } from '../../config/defaults.js';
import { remoteAuthTimeoutMs } from '../../config/derived.js';
import type { RunConfig } from '../../config/runconfig.js';
import { resolveSecretRef } from '../../secrets/refs.js';
import type { SecretsProvider } from '../../secrets/types.js';
import { usageError } from '../../util/errors.js';
import { checkClientMetadataUrl } from './client-metadata-url.js';

export interface RemoteOAuthSettings {
  workload: string;
  remoteUrl: string;
  issuer?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  clientId?: string;
  clientSecret?: string;
  /** A client ID metadata document URL (CIMD): the client_id where the server supports it. */
  clientMetadataUrl?: string;
  /** Explicit scopes; undefined means "discover" (challenge, metadata, or the OIDC default). */
  scopes?: string[];
  scopeParamName?: string;
  resource?: string;
  callbackPort: number;
  skipBrowser: boolean;
  timeoutMs: number;
  extraParams: Record<string, string>;
}

/** True when the RunConfig asks for OAuth to the remote (--remote-auth or any OAuth endpoint/client flag). */
export function remoteOAuthRequested(config: RunConfig): boolean {
  const auth = config.remote_auth_config;
  if (!auth || !config.remote_url) return false;
  return Boolean(
    auth.enabled ||
    auth.issuer ||
    auth.authorize_url ||
    auth.token_url ||
    auth.client_id ||
    auth.client_metadata_url,
  );
}

function checkUrl(value: string | undefined, flag: string): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${flag}: ${JSON.stringify(value)} is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw usageError(`${flag}: ${value} must be an https URL`);
  return value;
}

export async function readSecretFile(path: string, flag: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(
      `${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const value = text.trim();
  if (!value) throw usageError(`${flag}: ${path} is empty`);
  return value;
}

export async function resolveRemoteOAuthSettings(
  config: RunConfig,
  secrets: SecretsProvider,
): Promise<RemoteOAuthSettings> {
  const auth = config.remote_auth_config ?? {};
  const remoteUrl = config.remote_url;
  if (!remoteUrl) throw usageError('--remote-auth needs a remote server URL as the target');
  const issuer = checkUrl(auth.issuer, '--remote-auth-issuer');
  const authorizeUrl = checkUrl(auth.authorize_url, '--remote-auth-authorize-url');
  const tokenUrl = checkUrl(auth.token_url, '--remote-auth-token-url');
  if (issuer && (authorizeUrl || tokenUrl)) {
    throw usageError(
      '--remote-auth-issuer cannot be combined with --remote-auth-authorize-url/--remote-auth-token-url: give the issuer (discovery) or both endpoints',
    );
  }
  if (Boolean(authorizeUrl) !== Boolean(tokenUrl)) {
    throw usageError('--remote-auth-authorize-url and --remote-auth-token-url must be given together');
  }
  if (authorizeUrl && !auth.client_id) {
    throw usageError(
      '--remote-auth-authorize-url/--remote-auth-token-url need --remote-auth-client-id (no registration endpoint is known)',
    );
  }
  let clientSecret: string | undefined;
  if (auth.client_secret)
    clientSecret = await resolveSecretRef(auth.client_secret, secrets, '--remote-auth-client-secret');
  else if (auth.client_secret_file) {
    clientSecret = await readSecretFile(auth.client_secret_file, '--remote-auth-client-secret-file');
  }
  const scopes = auth.scopes?.flatMap((s) => s.split(/[\s,]+/)).filter((s) => s !== '');
  return {
    workload: config.name,
    remoteUrl,
    issuer,
    authorizeUrl,
    tokenUrl,
    clientId: auth.client_id || undefined,
    clientSecret,
    clientMetadataUrl: auth.client_metadata_url
      ? checkClientMetadataUrl(auth.client_metadata_url, '--remote-auth-client-metadata-url')
      : undefined,
    scopes: scopes && scopes.length > 0 ? scopes : undefined,
    scopeParamName: auth.scope_param_name || undefined,
    resource: checkUrl(auth.resource, '--remote-auth-resource') ?? undefined,
    callbackPort: auth.callback_port ?? DEFAULTS.remoteAuthCallbackPort,
    skipBrowser: auth.skip_browser === true,
    timeoutMs: remoteAuthTimeoutMs(auth),
    extraParams: auth.oauth_params ?? {},
  };
}
