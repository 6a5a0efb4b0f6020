/**
 * Which authorization server a remote MCP server uses, the RFC 8707 resource and the scopes to ask
 * for: from explicit endpoints, an explicit issuer, or the remote's own 401 and metadata. Also read
 * again on an upstream 401, because a remote may move to another authorization server.
 */
import { DEFAULTS } from '../../config/defaults.js';
import { runtimeError } from '../../util/errors.js';
import {
  defaultEndpoints,
  discoverAuthorizationServer,
  discoverResource,
  fetchResourceMetadata,
  type AuthorizationServerMetadata,
  type BearerChallenge,
  type Fetch,
} from './discovery.js';
import type { RemoteOAuthSettings } from './oauth-settings.js';
import { checkDiscoveredUrl } from './url-guard.js';

export interface ResolvedServer {
  metadata: AuthorizationServerMetadata;
  resource?: string;
  scopes: string[];
  /**
   * The issuer is the server's real one (from its metadata or --remote-auth-issuer), so the `iss`
   * of an authorization response can be compared with it. False for endpoints given by hand and
   * the 2025-03-26 default endpoints, whose issuer is a stand-in.
   */
  issuerKnown: boolean;
  /** The issuer came from the remote's protected-resource metadata, so the remote may change it. */
  issuerFromResource: boolean;
  /**
   * The remote let the probe through without a 401 yet publishes metadata: its first 401 (on a
   * later request) names the scope to ask for, so a foreground login waits for it.
   */
  challengeLater: boolean;
}

/** The endpoints an authorization server's metadata names get the discovered-URL rules. */
function checkEndpoints(metadata: AuthorizationServerMetadata, remoteUrl: string): void {
  for (const key of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint'] as const) {
    const value = metadata[key];
    if (value) checkDiscoveredUrl(value, remoteUrl, key);
  }
}

/** Undefined when the remote neither answers 401 nor publishes protected-resource metadata. */
export async function resolveServer(
  settings: RemoteOAuthSettings,
  fetchImpl: Fetch,
): Promise<ResolvedServer | undefined> {
  const { remoteUrl } = settings;
  const fixed = { issuerFromResource: false, challengeLater: false };
  if (settings.authorizeUrl && settings.tokenUrl) {
    return {
      metadata: {
        issuer: settings.issuer ?? new URL(settings.authorizeUrl).origin,
        authorization_endpoint: settings.authorizeUrl,
        token_endpoint: settings.tokenUrl,
      },
      resource: settings.resource,
      scopes: settings.scopes ?? [],
      issuerKnown: false,
      ...fixed,
    };
  }
  if (settings.issuer) {
    // The same address rules as URLs learned from the remote's metadata.
    checkDiscoveredUrl(settings.issuer, remoteUrl, '--remote-auth-issuer');
    const found = await discoverAuthorizationServer(settings.issuer, fetchImpl);
    if (!found) {
      throw runtimeError(
        `no OAuth metadata found for --remote-auth-issuer ${settings.issuer} (tried RFC 8414 and OpenID discovery); give --remote-auth-authorize-url and --remote-auth-token-url instead`,
      );
    }
    // An OpenID provider (found through OIDC discovery, or advertising the openid scope) gets the OIDC defaults.
    const isOidc = found.oidc || Boolean(found.metadata.scopes_supported?.includes('openid'));
    checkEndpoints(found.metadata, remoteUrl);
    return {
      metadata: found.metadata,
      resource: settings.resource,
      scopes: settings.scopes ?? (isOidc ? [...DEFAULTS.remoteAuthOidcScopes] : []),
      issuerKnown: true,
      ...fixed,
    };
  }
  const discovered = await discoverResource(remoteUrl, fetchImpl);
  const prm = discovered.metadata;
  let metadata: AuthorizationServerMetadata | undefined;
  let issuerKnown = true;
  if (prm?.authorization_servers?.[0]) {
    metadata = await authorizationServerMetadata(prm.authorization_servers[0], remoteUrl, fetchImpl);
  } else if (!discovered.unauthorized) {
    return undefined;
  } else {
    // 2025-03-26 servers: the authorization server is the MCP server's origin, with default endpoints.
    metadata = (await discoverAuthorizationServer(new URL(remoteUrl).origin, fetchImpl, { legacy: true }))
      ?.metadata;
    if (!metadata) {
      metadata = defaultEndpoints(remoteUrl);
      issuerKnown = false;
    }
  }
  checkEndpoints(metadata, remoteUrl);
  const resource = settings.resource ?? (prm ? checkResource(prm.resource, remoteUrl) : undefined);
  const challengeScope = discovered.challenge?.params.scope?.split(' ').filter(Boolean);
  const scopes = settings.scopes ?? (challengeScope?.length ? challengeScope : (prm?.scopes_supported ?? []));
  return {
    metadata,
    resource,
    scopes,
    issuerKnown,
    issuerFromResource: Boolean(prm?.authorization_servers?.[0]),
    challengeLater: !discovered.unauthorized && !settings.scopes,
  };
}

async function authorizationServerMetadata(
  issuer: string,
  remoteUrl: string,
  fetchImpl: Fetch,
): Promise<AuthorizationServerMetadata> {
  // Checked as a URL, asked for as written: its metadata must name this very string (RFC 8414 §3.3).
  checkDiscoveredUrl(issuer, remoteUrl, 'authorization server');
  const metadata = (await discoverAuthorizationServer(issuer, fetchImpl))?.metadata;
  if (!metadata)
    throw runtimeError(`no OAuth metadata found for the authorization server ${issuer} of ${remoteUrl}`);
  return metadata;
}

/**
 * On an upstream 401: the authorization server the remote names now, when it is another one than
 * `current` (its metadata, checked like at start). Undefined when nothing changed.
 */
export async function movedAuthorizationServer(
  server: ResolvedServer,
  remoteUrl: string,
  challenge: BearerChallenge | undefined,
  fetchImpl: Fetch,
): Promise<AuthorizationServerMetadata | undefined> {
  if (!server.issuerFromResource) return undefined;
  const named = (await fetchResourceMetadata(remoteUrl, challenge, fetchImpl)).metadata
    ?.authorization_servers?.[0];
  if (!named || named === server.metadata.issuer) return undefined;
  const metadata = await authorizationServerMetadata(named, remoteUrl, fetchImpl);
  checkEndpoints(metadata, remoteUrl);
  return metadata;
}

/** RFC 9728 §3.3: the metadata must describe this server; otherwise a token could be sent elsewhere. */
function checkResource(resource: string | undefined, remoteUrl: string): string {
  const remote = new URL(remoteUrl);
  const canonical = `${remote.origin}${remote.pathname.replace(/\/+$/, '')}`;
  if (!resource) return canonical;
  let named: URL;
  try {
    named = new URL(resource);
  } catch {
    throw runtimeError(
      `the protected-resource metadata of ${remoteUrl} names an invalid resource ${JSON.stringify(resource)}`,
    );
  }
  const namedPath = named.pathname.replace(/\/+$/, '');
  if (
    named.origin !== remote.origin ||
    !(remote.pathname === namedPath || remote.pathname.startsWith(`${namedPath}/`) || namedPath === '')
  ) {
    throw runtimeError(
      `the protected-resource metadata of ${remoteUrl} is for another resource (${resource}); refusing to send it credentials`,
    );
  }
  return resource;
}
