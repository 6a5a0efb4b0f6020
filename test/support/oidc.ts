/**
 * A real OpenID provider (panva's oidc-provider) started in-process on 127.0.0.1 for the inbound
 * authentication tests. Test users are client-credentials clients: the client id is the token's
 * `sub`, and each user's name, email and groups are added to its access tokens.
 *
 * Access tokens for `jwtResource` are RS256 JWTs; tokens for `opaqueResource` are opaque and only
 * usable through the provider's RFC 7662 introspection endpoint (it refuses to introspect JWTs).
 * `rotateKeys()` swaps in a provider with a new signing key (the old one stays published), behind
 * the same issuer URL, the way a real IdP rotates keys.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import type { OidcConfig } from '../../src/config/runconfig.js';

export interface TestUser {
  id: string;
  name?: string;
  email?: string;
  /** Emitted as the `groups` claim. */
  groups?: string[];
  /** Any further claims to put in the token. */
  claims?: Record<string, unknown>;
}

export interface TestOidcProvider {
  issuer: string;
  jwksUri: string;
  introspectionUrl: string;
  /** The audience (resource indicator) of JWT access tokens. */
  jwtResource: string;
  /** The audience of opaque access tokens (introspection only). */
  opaqueResource: string;
  /** A client that may call the introspection endpoint. */
  introspector: { clientId: string; clientSecret: string };
  /** Obtains an access token for a user (client credentials grant). */
  token(userId: string, options?: { resource?: string; scope?: string }): Promise<string>;
  /** Publishes a new signing key (first in the JWKS) and signs every later token with it. */
  rotateKeys(): Promise<void>;
  /** Number of GETs to the JWKS endpoint so far. */
  jwksFetches(): number;
  /** Authorization headers seen on discovery and JWKS requests, in order. */
  idpAuthorizations(): Array<string | undefined>;
  /** Number of introspection requests so far. */
  introspections(): number;
  close(): Promise<void>;
}

/** The RunConfig `oidc_config` that trusts `idp`'s JWT access tokens (on loopback, over plain HTTP). */
/** The `moat run` flags that trust `idp`'s JWT access tokens (on loopback, over plain HTTP). */
export function oidcRunFlags(idp: TestOidcProvider): string[] {
  return [
    '--oidc-issuer',
    idp.issuer,
    '--oidc-audience',
    idp.jwtResource,
    '--oidc-insecure-allow-http',
    '--jwks-allow-private-ip',
  ];
}

export function oidcConfigFor(idp: TestOidcProvider, extra: OidcConfig = {}): OidcConfig {
  return {
    Issuer: idp.issuer,
    Audience: idp.jwtResource,
    InsecureAllowHTTP: true,
    AllowPrivateIP: true,
    ...extra,
  };
}

const SECRET = 'test-secret-not-a-real-one';

function listener(provider: Provider): (req: IncomingMessage, res: ServerResponse) => void {
  const callback = provider.callback();
  return (req, res) => void callback(req, res);
}

async function newSigningKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

export async function startTestOidcProvider(
  users: TestUser[],
  options: { audience?: string; accessTokenTtlSeconds?: number } = {},
): Promise<TestOidcProvider> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  let jwksFetches = 0;
  const idpAuthorizations: Array<string | undefined> = [];
  let introspections = 0;
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/jwks')) jwksFetches += 1;
    if (req.method === 'POST' && req.url?.startsWith('/token/introspection')) introspections += 1;
    if (req.method === 'GET' && (req.url?.startsWith('/jwks') || req.url?.startsWith('/.well-known/'))) {
      idpAuthorizations.push(req.headers.authorization);
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const jwtResource = options.audience ?? `http://127.0.0.1:${port}/resource/jwt`;
  const opaqueResource = `http://127.0.0.1:${port}/resource/opaque`;
  const byId = new Map(users.map((u) => [u.id, u]));
  const introspector = { clientId: 'moat-introspector', clientSecret: `${SECRET}-introspector` };

  const makeProvider = (keys: JWK[]): Provider => {
    const provider = new Provider(issuer, {
      jwks: { keys },
      clients: [
        ...users.map((u) => ({
          client_id: u.id,
          client_secret: SECRET,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
        })),
        {
          client_id: introspector.clientId,
          client_secret: introspector.clientSecret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
        },
      ],
      scopes: ['openid', 'mcp:tools', 'mcp:admin'],
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: true, allowedPolicy: () => true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => jwtResource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource) => {
            const common = {
              scope: 'openid mcp:tools mcp:admin',
              accessTokenTTL: options.accessTokenTtlSeconds ?? 600,
            };
            if (resource === opaqueResource)
              return { ...common, audience: opaqueResource, accessTokenFormat: 'opaque' };
            return {
              ...common,
              audience: resource,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'RS256' } },
            };
          },
        },
      },
      ttl: { ClientCredentials: options.accessTokenTtlSeconds ?? 600 },
      extraTokenClaims: (_ctx, token) => {
        const user = byId.get((token as { clientId?: string }).clientId ?? '');
        if (!user) return undefined;
        return {
          sub: user.id,
          ...(user.name ? { name: user.name } : {}),
          ...(user.email ? { email: user.email } : {}),
          ...(user.groups ? { groups: user.groups } : {}),
          ...user.claims,
        };
      },
      routes: { jwks: '/jwks' },
    });
    // Plain HTTP on loopback is fine for tests; the provider otherwise insists on TLS-only cookies.
    provider.proxy = true;
    return provider;
  };

  const keys = [await newSigningKey('key-1')];
  handler = listener(makeProvider(keys));

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    introspectionUrl: `${issuer}/token/introspection`,
    jwtResource,
    opaqueResource,
    introspector,
    async token(userId, opts = {}) {
      const body = new URLSearchParams({
        grant_type: 'client_credentials',
        resource: opts.resource ?? jwtResource,
      });
      if (opts.scope) body.set('scope', opts.scope);
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${userId}:${SECRET}`).toString('base64')}`,
        },
        body,
      });
      const json = (await response.json()) as {
        access_token?: string;
        error?: string;
        error_description?: string;
      };
      if (!response.ok || !json.access_token) {
        throw new Error(`token request for ${userId} failed: ${json.error}: ${json.error_description}`);
      }
      return json.access_token;
    },
    async rotateKeys() {
      keys.unshift(await newSigningKey(`key-${keys.length + 1}`));
      handler = listener(makeProvider([...keys]));
    },
    jwksFetches: () => jwksFetches,
    idpAuthorizations: () => [...idpAuthorizations],
    introspections: () => introspections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
