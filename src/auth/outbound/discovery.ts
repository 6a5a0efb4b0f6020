/**
 * Finding the authorization server of a remote MCP server (MCP authorization, 2025-06-18 onward):
 * the remote's 401 `WWW-Authenticate` names its RFC 9728 protected-resource metadata (else the
 * well-known URIs, path-inserted then root), whose `authorization_servers` names the issuer; the
 * issuer's RFC 8414 / OpenID metadata is then fetched in the MCP-specified order. A 2025-03-26
 * server without any metadata gets the default endpoints at its origin.
 */
import { runtimeError } from '../../util/errors.js';
import { checkDiscoveredUrl } from './url-guard.js';

export type Fetch = typeof fetch;

export interface BearerChallenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses the first challenge of a WWW-Authenticate header (auth-params may be quoted). */
export function parseWwwAuthenticate(header: string | undefined): BearerChallenge | undefined {
  if (!header) return undefined;
  const match = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*(.*)$/s.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  const param = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?\s*/gy;
  const rest = match[2] ?? '';
  let m: RegExpExecArray | null;
  while ((m = param.exec(rest)) !== null && m[0] !== '') {
    params[(m[1] as string).toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
  }
  return { scheme: (match[1] as string).toLowerCase(), params };
}

export interface ProtectedResourceMetadata {
  resource?: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
}

export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  registration_endpoint?: string;
  scopes_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
  code_challenge_methods_supported?: string[];
  /** RFC 9207: the authorization response carries `iss`. */
  authorization_response_iss_parameter_supported?: boolean;
  /** The server accepts a client metadata document URL as client_id (CIMD). */
  client_id_metadata_document_supported?: boolean;
  [key: string]: unknown;
}

export interface ResourceDiscovery {
  /** The remote answered the probe with 401. */
  unauthorized: boolean;
  /** The challenge of the remote's 401, when it answered with one. */
  challenge?: BearerChallenge;
  metadata?: ProtectedResourceMetadata;
  /** Where the metadata was found. */
  metadataUrl?: string;
}

async function getJson(fetchImpl: Fetch, url: string): Promise<unknown> {
  const response = await fetchImpl(url, { headers: { accept: 'application/json' }, redirect: 'error' });
  if (!response.ok) {
    await response.body?.cancel();
    return undefined;
  }
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

/** Path-inserted well-known URIs first (RFC 8414 §3 / RFC 9728 §3), then the root one. */
function wellKnown(base: string, suffix: string): string[] {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, '');
  const urls = path ? [`${url.origin}/.well-known/${suffix}${path}`] : [];
  urls.push(`${url.origin}/.well-known/${suffix}`);
  return urls;
}

/** Probes the remote with an MCP initialize request and reads its protected-resource metadata. */
export async function discoverResource(
  remoteUrl: string,
  fetchImpl: Fetch = fetch,
): Promise<ResourceDiscovery> {
  let challenge: BearerChallenge | undefined;
  let unauthorized: boolean;
  try {
    const response = await fetchImpl(remoteUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'moat', version: '0' },
        },
      }),
    });
    await response.body?.cancel();
    unauthorized = response.status === 401;
    if (unauthorized) challenge = parseWwwAuthenticate(response.headers.get('www-authenticate') ?? undefined);
  } catch (err) {
    throw runtimeError(`cannot reach the remote server ${remoteUrl}: ${(err as Error).message}`);
  }
  return { unauthorized, challenge, ...(await fetchResourceMetadata(remoteUrl, challenge, fetchImpl)) };
}

/**
 * The remote's RFC 9728 metadata: where its challenge's `resource_metadata` says, else the
 * well-known URIs. Also read again on an upstream 401, to notice a change of authorization server.
 */
export async function fetchResourceMetadata(
  remoteUrl: string,
  challenge: BearerChallenge | undefined,
  fetchImpl: Fetch = fetch,
): Promise<{ metadata?: ProtectedResourceMetadata; metadataUrl?: string }> {
  const candidates = challenge?.params.resource_metadata
    ? [checkDiscoveredUrl(challenge.params.resource_metadata, remoteUrl, 'resource_metadata').href]
    : wellKnown(remoteUrl, 'oauth-protected-resource');
  for (const url of candidates) {
    const metadata = (await getJson(fetchImpl, url)) as ProtectedResourceMetadata | undefined;
    if (metadata && typeof metadata === 'object') return { metadata, metadataUrl: url };
  }
  return {};
}

/** The MCP order: oauth-authorization-server (inserted), openid-configuration (inserted, then appended). */
export function authorizationServerMetadataUrls(issuer: string): Array<{ url: string; oidc: boolean }> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path) {
    return [
      { url: `${url.origin}/.well-known/oauth-authorization-server`, oidc: false },
      { url: `${url.origin}/.well-known/openid-configuration`, oidc: true },
    ];
  }
  return [
    { url: `${url.origin}/.well-known/oauth-authorization-server${path}`, oidc: false },
    { url: `${url.origin}/.well-known/openid-configuration${path}`, oidc: true },
    { url: `${url.origin}${path}/.well-known/openid-configuration`, oidc: true },
  ];
}

export interface DiscoveredServer {
  metadata: AuthorizationServerMetadata;
  /** Found through OpenID Connect discovery (openid-configuration). */
  oidc: boolean;
}

/** Fetches the issuer's metadata; undefined when none of the well-known documents exists. */
export async function discoverAuthorizationServer(
  issuer: string,
  fetchImpl: Fetch = fetch,
  options: { legacy?: boolean } = {},
): Promise<DiscoveredServer | undefined> {
  for (const { url, oidc } of authorizationServerMetadataUrls(issuer)) {
    let metadata: AuthorizationServerMetadata | undefined;
    try {
      metadata = (await getJson(fetchImpl, url)) as AuthorizationServerMetadata | undefined;
    } catch (err) {
      throw runtimeError(`cannot reach the authorization server ${issuer}: ${(err as Error).message}`);
    }
    if (!metadata || typeof metadata !== 'object') continue;
    // RFC 8414 §3.3: the issuer must be identical to the one asked for (no trailing-slash or case
    // leniency: tokens and registrations are keyed by it). A 2025-03-26 server (its own
    // authorization server, found at its origin) may name a path below that origin instead.
    const legacyOk = options.legacy === true && sameOrigin(metadata.issuer, issuer);
    if (metadata.issuer !== issuer && !legacyOk) {
      throw runtimeError(
        `the authorization server metadata at ${url} names issuer ${JSON.stringify(metadata.issuer)}, but it was fetched for issuer ${JSON.stringify(issuer)}; RFC 8414 §3.3 requires them to be identical: refused`,
      );
    }
    return { metadata, oidc };
  }
  return undefined;
}

function sameOrigin(a: unknown, b: string): boolean {
  try {
    return typeof a === 'string' && new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/** 2025-03-26 fallback: no metadata anywhere, so the default endpoints at the server's origin. */
export function defaultEndpoints(remoteUrl: string): AuthorizationServerMetadata {
  const { origin } = new URL(remoteUrl);
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
  };
}
