/**
 * Outbound authentication to a remote/HTTP backend, built from the RunConfig: forwarded headers,
 * a static bearer token, OAuth 2.1 to the remote, and RFC 8693 token exchange, combined into one
 * UpstreamAuth for the proxy's HTTP forwarder. The caller's own inbound token is never among the
 * headers: only token exchange reads it, to obtain a different token.
 */
import type { RunConfig } from '../../config/runconfig.js';
import type { SecretsProvider } from '../../secrets/types.js';
import { usageError } from '../../util/errors.js';
import { remoteOAuthRequested, resolveRemoteOAuthSettings } from './oauth-settings.js';
import { RemoteOAuth, type RemoteOAuthDeps } from './remote-oauth.js';
import { resolveStaticHeaders } from './static-headers.js';
import { resolveTokenExchangeSettings, TokenExchange, tokenExchangeRequested } from './token-exchange.js';
import { forgetWorkloadTokens, OAuthStore } from './token-store.js';
import type { UpstreamAuth } from './types.js';
import type { Identity } from '../../mcp/identity.js';

export type { RemoteAuthStatus } from './remote-oauth.js';
export { validateForwardHeaderName, BEARER_TOKEN_ENV } from './static-headers.js';
export { CLIENT_SECRET_ENV as TOKEN_EXCHANGE_CLIENT_SECRET_ENV } from './token-exchange.js';

export interface UpstreamAuthDeps extends Omit<RemoteOAuthDeps, 'store'> {
  /** The secrets provider (not the user view: system secrets hold OAuth state). */
  secrets: SecretsProvider;
  env?: NodeJS.ProcessEnv;
}

function hasInboundAuth(config: RunConfig): boolean {
  const oidc = config.oidc_config;
  return Boolean(oidc && (oidc.Issuer || oidc.JWKSURL || oidc.IntrospectionURL));
}

/**
 * Undefined when nothing is configured. With OAuth this logs in (or reuses/refreshes stored tokens)
 * before it resolves, so call it before the proxy starts accepting clients.
 */
export async function createUpstreamAuth(
  config: RunConfig,
  deps: UpstreamAuthDeps,
): Promise<UpstreamAuth | undefined> {
  const staticHeaders = await resolveStaticHeaders(config, deps.secrets, deps.env);
  const wantsOAuth = remoteOAuthRequested(config);
  const wantsExchange = tokenExchangeRequested(config);
  if (wantsOAuth && staticHeaders.Authorization) {
    throw usageError(
      '--remote-auth (OAuth) cannot be combined with a bearer token (--remote-auth-bearer-token*)',
    );
  }
  let exchange: TokenExchange | undefined;
  if (wantsExchange) {
    if (!hasInboundAuth(config)) {
      throw usageError(
        "--token-exchange-url needs inbound authentication (--oidc-issuer, --oidc-jwks-url or --oidc-introspection-url): it exchanges the caller's validated token",
      );
    }
    const settings = await resolveTokenExchangeSettings(
      config.token_exchange_config!,
      deps.secrets,
      deps.env,
    );
    if (settings.headerName === 'Authorization' && (wantsOAuth || staticHeaders.Authorization)) {
      throw usageError(
        'token exchange replaces the Authorization header, so it cannot be combined with --remote-auth or a bearer token; name another header with --token-exchange-header-name',
      );
    }
    exchange = new TokenExchange(settings, { fetch: deps.fetch, now: deps.now });
  }
  let oauth: RemoteOAuth | undefined;
  if (wantsOAuth) {
    const settings = await resolveRemoteOAuthSettings(config, deps.secrets);
    oauth = await RemoteOAuth.start(settings, { ...deps, store: new OAuthStore(deps.secrets) });
  }
  if (!oauth && !exchange && Object.keys(staticHeaders).length === 0) return undefined;

  const auth: UpstreamAuth = {
    async headers(identity: Identity) {
      return {
        ...staticHeaders,
        ...(oauth ? await oauth.headers() : {}),
        ...(exchange ? await exchange.headers(identity) : {}),
      };
    },
  };
  if (oauth) auth.onUnauthorized = (www) => oauth.onUnauthorized(www);
  return auth;
}

/** Deletes a workload's stored OAuth tokens, from every issuer (client registrations stay: they belong to the issuer). */
export function forgetRemoteAuth(secrets: SecretsProvider, workload: string): Promise<void> {
  return forgetWorkloadTokens(secrets, workload);
}
