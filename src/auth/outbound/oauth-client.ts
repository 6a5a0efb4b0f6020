/**
 * The OAuth client Moat presents to a remote's authorization server, in this order: a client ID
 * metadata document URL (CIMD) when the user gave one and the server supports it, the client ID
 * the user gave, the registration stored for this issuer, or a new RFC 7591 dynamic registration.
 * Clients belong to one issuer: a registration is stored and looked up by it.
 */
import * as oidc from 'openid-client';
import { runtimeError } from '../../util/errors.js';
import { log } from '../../util/log.js';
import type { AuthorizationServerMetadata, Fetch } from './discovery.js';
import type { RemoteOAuthSettings } from './oauth-settings.js';
import type { ClientRegistration, OAuthStore } from './token-store.js';
import { needsInsecureHttp } from './url-guard.js';

export interface ClientCredentials {
  clientId: string;
  clientSecret?: string;
  method: string;
  /** For a dynamically registered client: the redirect URIs it was registered with. */
  redirectUris?: string[];
  /** Given by the user (flags), not learned from this issuer. */
  configured?: boolean;
  /** Registered because the issuer refused our client ID metadata document (see token-store.ts). */
  cimdRefused?: boolean;
}

/** The token-endpoint authentication to use (or ask for in a registration), from what the server supports. */
function chooseAuthMethod(metadata: AuthorizationServerMetadata, hasSecret: boolean): string {
  if (!hasSecret) return 'none';
  const supported = metadata.token_endpoint_auth_methods_supported;
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return supported.includes('none') ? 'none' : 'client_secret_basic';
}

/**
 * A client metadata document URL where the server takes one, else an explicit client, else the
 * registration stored for this issuer (unless its secret expired); undefined means "register".
 */
export async function existingClient(
  settings: RemoteOAuthSettings,
  metadata: AuthorizationServerMetadata,
  store: OAuthStore,
): Promise<ClientCredentials | undefined> {
  const stored = await store.registration(metadata.issuer);
  if (settings.clientMetadataUrl) {
    const supported = metadata.client_id_metadata_document_supported === true;
    // A metadata document cannot hold a shared secret: the client is public (PKCE protects the code).
    if (supported && stored?.cimdRefused !== true)
      return { clientId: settings.clientMetadataUrl, method: 'none', configured: true };
    log().info(
      { workload: settings.workload, issuer: metadata.issuer },
      supported
        ? 'the authorization server refused our client ID metadata document before; using a client ID or registration instead'
        : 'the authorization server does not support client ID metadata documents; using a client ID or registration instead',
    );
  }
  if (settings.clientId) {
    return {
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      method: chooseAuthMethod(metadata, Boolean(settings.clientSecret)),
      configured: true,
    };
  }
  if (!stored) return undefined;
  const expired = stored.client_secret_expires_at
    ? stored.client_secret_expires_at * 1000 <= Date.now()
    : false;
  return expired ? undefined : clientFromRegistration(stored);
}

export function clientFromRegistration(registration: ClientRegistration): ClientCredentials {
  return {
    clientId: registration.client_id,
    clientSecret: registration.client_secret,
    method: registration.token_endpoint_auth_method,
    redirectUris: registration.redirect_uris,
    ...(registration.cimdRefused === true ? { cimdRefused: true } : {}),
  };
}

/** RFC 7591 dynamic client registration as a native app with a loopback redirect (RFC 8252). */
export async function registerClient(
  settings: RemoteOAuthSettings,
  metadata: AuthorizationServerMetadata,
  fetchImpl: Fetch,
  redirectUri: string,
): Promise<ClientRegistration> {
  if (!metadata.registration_endpoint) {
    throw runtimeError(
      `the authorization server ${metadata.issuer} does not support dynamic client registration; register a client there and pass --remote-auth-client-id (and --remote-auth-client-secret-file if it has a secret)${metadata.client_id_metadata_document_supported === true ? ', or host a client ID metadata document and pass --remote-auth-client-metadata-url' : ''}`,
    );
  }
  const method = chooseAuthMethod(metadata, true);
  const redirectUris = [redirectUri];
  const request = {
    client_name: `Moat (${settings.workload})`,
    application_type: 'native',
    redirect_uris: redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: method,
  };
  let response: Response;
  try {
    response = await fetchImpl(metadata.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(request),
    });
  } catch (err) {
    throw runtimeError(
      `cannot reach the registration endpoint of ${metadata.issuer}: ${(err as Error).message}`,
    );
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof body.client_id !== 'string') {
    const description = typeof body.error_description === 'string' ? ` (${body.error_description})` : '';
    const error = typeof body.error === 'string' ? `${body.error}${description}` : `HTTP ${response.status}`;
    throw runtimeError(`dynamic client registration at ${metadata.issuer} failed: ${error}`);
  }
  return {
    issuer: metadata.issuer,
    client_id: body.client_id,
    client_secret: typeof body.client_secret === 'string' ? body.client_secret : undefined,
    token_endpoint_auth_method:
      typeof body.token_endpoint_auth_method === 'string'
        ? body.token_endpoint_auth_method
        : typeof body.client_secret === 'string'
          ? 'client_secret_basic'
          : 'none',
    redirect_uris: Array.isArray(body.redirect_uris) ? (body.redirect_uris as string[]) : redirectUris,
    client_secret_expires_at:
      typeof body.client_secret_expires_at === 'number' ? body.client_secret_expires_at : undefined,
    registration_access_token:
      typeof body.registration_access_token === 'string' ? body.registration_access_token : undefined,
    registration_client_uri:
      typeof body.registration_client_uri === 'string' ? body.registration_client_uri : undefined,
  };
}

function clientAuth(client: ClientCredentials): oidc.ClientAuth {
  switch (client.method) {
    case 'client_secret_post':
      return oidc.ClientSecretPost(client.clientSecret);
    case 'none':
      return oidc.None();
    default:
      return client.clientSecret ? clientSecretBasic(client.clientSecret) : oidc.None();
  }
}

/**
 * client_secret_basic with the plain form encoding of RFC 6749 §2.3.1. openid-client also escapes
 * characters such as '-', which servers that skip the URL-decoding step (several do) then reject.
 */
export function clientSecretBasic(secret: string): oidc.ClientAuth {
  const encode = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2);
  return (_as, client, _body, headers) => {
    const credentials = `${encode(client.client_id)}:${encode(secret)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
  };
}

export function buildConfiguration(
  metadata: AuthorizationServerMetadata,
  client: ClientCredentials,
  fetchImpl: Fetch,
): oidc.Configuration {
  const config = new oidc.Configuration(
    metadata as oidc.ServerMetadata,
    client.clientId,
    client.clientSecret ? { client_secret: client.clientSecret } : undefined,
    clientAuth(client),
  );
  config[oidc.customFetch] = (url, options) => fetchImpl(url, options);
  if (needsInsecureHttp(metadata.issuer, metadata.token_endpoint, metadata.authorization_endpoint)) {
    // Loopback development servers only: discovered URLs were checked by checkDiscoveredUrl.
    oidc.allowInsecureRequests(config);
  }
  return config;
}
