/**
 * RFC 9728 protected-resource metadata for Moat's own URL (not the upstream's: the proxy is the
 * resource server clients talk to) and the RFC 6750 `WWW-Authenticate` challenge that points at it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const PRM_PATH = '/.well-known/oauth-protected-resource';

export interface ResourceMetadataSettings {
  /** Explicit resource URL (--resource-url). */
  resourceUrl?: string;
  issuer?: string;
  scopesSupported: string[];
}

/** The canonical resource URI: --resource-url, else the URL clients reach the MCP endpoint at. */
export function resourceUrl(
  settings: ResourceMetadataSettings,
  externalBaseUrl: string,
  mcpPath: string,
): string {
  return settings.resourceUrl ?? `${externalBaseUrl.replace(/\/+$/, '')}${mcpPath}`;
}

/** Where the metadata for `resource` is served: the path-inserted well-known URL (RFC 9728 §3.1). */
export function metadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${PRM_PATH}${path}`;
}

export function metadataDocument(
  settings: ResourceMetadataSettings,
  resource: string,
): Record<string, unknown> {
  return {
    resource,
    ...(settings.issuer ? { authorization_servers: [settings.issuer] } : {}),
    bearer_methods_supported: ['header'],
    scopes_supported: settings.scopesSupported,
  };
}

/** Serves GET/HEAD/OPTIONS on the metadata paths, with CORS so browser-based clients can read it. */
export function serveMetadata(
  req: IncomingMessage,
  res: ServerResponse,
  settings: ResourceMetadataSettings,
  resource: string,
): void {
  res.setHeader('access-control-allow-origin', req.headers.origin ?? '*');
  res.setHeader('access-control-allow-methods', 'GET, OPTIONS');
  res.setHeader('access-control-allow-headers', 'mcp-protocol-version, content-type, authorization');
  res.setHeader('access-control-max-age', '86400');
  res.setHeader('vary', 'origin');
  if (req.method === 'OPTIONS') {
    res.writeHead(204).end();
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, OPTIONS', 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'method_not_allowed' }));
    return;
  }
  const body = JSON.stringify(metadataDocument(settings, resource));
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'max-age=300',
    'content-length': Buffer.byteLength(body),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export interface Challenge {
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
  description?: string;
}

/** `Bearer resource_metadata="…", scope="…", error="…", error_description="…"`. */
export function challengeHeader(resource: string, scopes: string[], challenge: Challenge): string {
  const parts = [`resource_metadata="${metadataUrl(resource)}"`];
  if (scopes.length > 0) parts.push(`scope="${quoted(scopes.join(' '))}"`);
  if (challenge.error) parts.push(`error="${challenge.error}"`);
  if (challenge.description) parts.push(`error_description="${quoted(challenge.description)}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** RFC 6750 limits these values to printable ASCII without `"` and `\`. */
function quoted(value: string): string {
  return value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '');
}
