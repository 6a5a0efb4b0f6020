/**
 * A real OpenID provider (panva's oidc-provider) in-process on 127.0.0.1 for the outbound-auth tests:
 * dynamic client registration, authorization code + PKCE through the development login and consent
 * pages, refresh tokens, resource indicators (JWT access tokens whose audience is the MCP server's
 * URL), and an RFC 8693 token-exchange grant (oidc-provider has none built in, so a small handler is
 * registered here).
 *
 * `login()` plays the browser: it follows the authorization URL through the login and consent pages
 * with a cookie jar and finally requests the redirect (our loopback callback server).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK, type JWTPayload } from 'jose';
import Provider, { errors } from 'oidc-provider';
import { registrationSecretName, tokensSecretName } from '../../src/auth/outbound/token-store.js';
import type { SecretsProvider } from '../../src/secrets/types.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const TOKEN_TYPE_ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const TOKEN_TYPE_ID = 'urn:ietf:params:oauth:token-type:id_token';

export interface OAuthProviderOptions {
  /** Lifetime of access tokens for resources (default 600 s). */
  accessTokenTtlSeconds?: number;
  /** Dynamic client registration (default on). */
  registration?: boolean;
  /** Scopes of every resource server, space-separated (default "mcp:tools"). */
  resourceScope?: string;
  /**
   * Advertise client ID metadata documents (CIMD) yet refuse a URL client id at the authorization
   * endpoint, redirecting `invalid_client` back to a loopback redirect URI (as a CIMD server that
   * read the document, and so trusts its redirect URI, would). oidc-provider has no CIMD itself.
   */
  refuseCimd?: boolean;
}

export interface TestOAuthProvider {
  issuer: string;
  /** A confidential client allowed to use the token-exchange grant. */
  exchangeClient: { clientId: string; clientSecret: string };
  /** Audience of tokens minted by `inboundToken` (what a client presents to the proxy). */
  inboundAudience: string;
  counts: {
    registrations: number;
    authorizationCodes: number;
    refreshes: number;
    refreshErrors: number;
    exchanges: number;
    /** Every request to the token endpoint, whatever its grant and outcome. */
    tokenRequests: number;
  };
  /** A JWT access token for a user, as an inbound identity provider would issue it. */
  inboundToken(userId: string): Promise<string>;
  /** Verifies an access token issued by this provider for `audience`; throws when invalid. */
  verify(token: string, audience: string): Promise<JWTPayload>;
  /**
   * Completes a browser flow headlessly; returns the callback's HTTP status and body.
   * `rewriteCallback` changes the final redirect to the client (to stage a tampered response).
   */
  login(
    authorizationUrl: string,
    userId?: string,
    options?: { rewriteCallback?: (callback: URL) => URL },
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

const COOKIE_KEYS = ['test-cookie-key-not-a-real-one'];

/**
 * Revokes a workload's refresh token for `resource`, as stored in `secrets`, at `op` (as an
 * administrator or the user would), authenticating as the dynamically registered client; returns
 * the provider's answer.
 */
export async function revokeStoredRefreshToken(
  op: TestOAuthProvider,
  secrets: Pick<SecretsProvider, 'get'>,
  workload: string,
  resource: string,
): Promise<Response> {
  const tokens = JSON.parse(
    (await secrets.get(tokensSecretName(workload, { issuer: op.issuer, resource })))!,
  );
  const registration = JSON.parse((await secrets.get(registrationSecretName(op.issuer)))!);
  const basic = Buffer.from(`${registration.client_id}:${registration.client_secret}`).toString('base64');
  return fetch(`${op.issuer}/token/revocation`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
    body: new URLSearchParams({ token: tokens.refresh_token, token_type_hint: 'refresh_token' }),
  });
}

export async function startOAuthProvider(options: OAuthProviderOptions = {}): Promise<TestOAuthProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const inboundAudience = `${issuer}/inbound-proxy`;
  const exchangeClient = { clientId: 'moat-exchanger', clientSecret: 'exchange-secret-not-real' };
  const counts = {
    registrations: 0,
    authorizationCodes: 0,
    refreshes: 0,
    refreshErrors: 0,
    exchanges: 0,
    tokenRequests: 0,
  };
  const ttl = options.accessTokenTtlSeconds ?? 600;
  const resourceScope = options.resourceScope ?? 'mcp:tools';

  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const localJwks = createLocalJWKSet({
    keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }],
  });

  const resourceInfo = (audience: string, scope = resourceScope) => ({
    scope,
    audience,
    accessTokenTTL: ttl,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'RS256' as const } },
  });

  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    cookies: { keys: COOKIE_KEYS },
    clients: [
      {
        client_id: exchangeClient.clientId,
        client_secret: exchangeClient.clientSecret,
        grant_types: [TOKEN_EXCHANGE],
        redirect_uris: [],
        response_types: [],
      },
    ],
    scopes: ['openid', 'profile', 'email', 'offline_access', ...resourceScope.split(' ')],
    claims: { email: ['email'], profile: ['name'] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, name: `User ${id}`, email: `${id}@example.test` }),
    }),
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: options.registration ?? true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => resourceInfo(resource),
      },
    },
    ...(options.refuseCimd ? refusingCimd(issuer) : {}),
    // Refresh tokens for every client allowed the grant (not only with offline_access).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    pkce: { required: () => true },
    ttl: { AccessToken: ttl, RefreshToken: 24 * 3600, Grant: 24 * 3600, Interaction: 600, Session: 3600 },
  });
  // Plain HTTP on loopback: let the provider treat requests as if TLS were terminated in front.
  provider.proxy = true;

  const newGrant = (accountId: string, clientId: string): Promise<string> =>
    new provider.Grant({ accountId, clientId }).save();

  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx) => {
      counts.exchanges += 1;
      const params = ctx.oidc.params as Record<string, string | undefined>;
      if (params.subject_token_type !== TOKEN_TYPE_ACCESS && params.subject_token_type !== TOKEN_TYPE_ID) {
        throw new errors.InvalidRequest('unsupported subject_token_type');
      }
      let subject: JWTPayload;
      try {
        ({ payload: subject } = await jwtVerify(params.subject_token ?? '', localJwks, { issuer }));
      } catch {
        throw new errors.InvalidGrant('subject_token is not valid');
      }
      const audience = params.audience ?? params.resource;
      if (!audience) throw new errors.InvalidTarget('audience is required');
      const token = new provider.AccessToken({
        accountId: subject.sub!,
        client: ctx.oidc.client,
        scope: params.scope,
        gty: 'token_exchange',
        grantId: await newGrant(subject.sub!, ctx.oidc.client.clientId),
      });
      token.resourceServer = new provider.ResourceServer(
        audience,
        resourceInfo(audience, params.scope ?? ''),
      );
      ctx.body = {
        access_token: await token.save(),
        issued_token_type: TOKEN_TYPE_ACCESS,
        token_type: 'Bearer',
        expires_in: token.expiration,
        ...(params.scope ? { scope: params.scope } : {}),
      };
    },
    ['subject_token', 'subject_token_type', 'audience', 'resource', 'scope', 'requested_token_type'],
  );

  provider.on('registration_create.success', () => (counts.registrations += 1));
  provider.on('grant.success', (ctx) => {
    const grantType = (ctx.oidc.params as { grant_type?: string }).grant_type;
    if (grantType === 'authorization_code') counts.authorizationCodes += 1;
    if (grantType === 'refresh_token') counts.refreshes += 1;
  });
  provider.on('grant.error', (ctx) => {
    if ((ctx.oidc.params as { grant_type?: string } | undefined)?.grant_type === 'refresh_token')
      counts.refreshErrors += 1;
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (req.method === 'POST' && req.url?.split('?')[0] === '/token') counts.tokenRequests += 1;
    void handle(req, res);
  });

  return {
    issuer,
    exchangeClient,
    inboundAudience,
    counts,
    async inboundToken(userId) {
      const client = await provider.Client.find(exchangeClient.clientId);
      const token = new provider.AccessToken({
        accountId: userId,
        client: client!,
        scope: 'openid',
        gty: 'client_credentials',
        grantId: await newGrant(userId, client!.clientId),
      });
      token.resourceServer = new provider.ResourceServer(
        inboundAudience,
        resourceInfo(inboundAudience, 'openid'),
      );
      return token.save();
    },
    async verify(token, audience) {
      const { payload } = await jwtVerify(token, localJwks, { issuer, audience });
      return payload;
    },
    login: (authorizationUrl, userId = 'alice', options = {}) =>
      driveBrowser(authorizationUrl, userId, options.rewriteCallback),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The provider settings of `refuseCimd`: the metadata flag, and the refusal sent back to the client. */
function refusingCimd(issuer: string) {
  return {
    discovery: { client_id_metadata_document_supported: true },
    renderError: (
      ctx: { query: Record<string, unknown>; redirect(url: string): void },
      out: { error: string },
    ) => {
      const { client_id: clientId, redirect_uri: redirectUri, state } = ctx.query;
      const refusedUrlClient =
        out.error === 'invalid_client' && typeof clientId === 'string' && clientId.startsWith('https://');
      if (
        !refusedUrlClient ||
        typeof redirectUri !== 'string' ||
        !redirectUri.startsWith('http://127.0.0.1:')
      ) {
        throw new Error(`unexpected authorization error ${out.error}`);
      }
      const back = new URL(redirectUri);
      back.searchParams.set('error', 'invalid_client');
      back.searchParams.set('error_description', 'client ID metadata documents are not accepted here');
      if (typeof state === 'string') back.searchParams.set('state', state);
      back.searchParams.set('iss', issuer);
      ctx.redirect(back.href);
    },
  };
}

/** A cookie-keeping browser that clicks through the development login and consent pages. */
async function driveBrowser(
  start: string,
  userId: string,
  rewriteCallback: (callback: URL) => URL = (callback) => callback,
): Promise<{ status: number; body: string }> {
  const jar = new Map<string, string>();
  const origin = new URL(start).origin;
  const request = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (new URL(url).origin === origin && jar.size > 0) {
      headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    }
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  };

  let url = start;
  let init: RequestInit = {};
  for (let step = 0; step < 20; step++) {
    const response = await request(url, init);
    init = {};
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      url = (next.origin === origin ? next : rewriteCallback(next)).href;
      continue;
    }
    const body = await response.text();
    if (new URL(url).origin !== origin) return { status: response.status, body };
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(body);
    if (!form) return { status: response.status, body };
    const fields = new URLSearchParams();
    for (const input of form[2]!.matchAll(/<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?/g)) {
      fields.set(input[1]!, input[2] ?? '');
    }
    if (fields.has('login')) fields.set('login', userId);
    if (fields.has('password')) fields.set('password', 'any');
    url = new URL(form[1]!, url).href;
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: fields.toString(),
    };
  }
  throw new Error(`the login flow did not reach the callback from ${start}`);
}
