/**
 * OAuth 2.1 to a remote MCP server (openid-client v6): find the authorization server, get a client
 * (explicit, a registration stored for the issuer, or RFC 7591 dynamic registration asking for the
 * authorization_code and refresh_token grants), log in with authorization code + PKCE S256 and an
 * RFC 8707 resource through a loopback callback, then keep the tokens fresh: refreshed shortly
 * before expiry and on an upstream 401. When only a new login would help, the status hook reports
 * `reauth_required` once and requests fail fast instead of looping through refresh attempts.
 */
import * as oidc from 'openid-client';
import { DEFAULTS } from '../../config/defaults.js';
import type { MoatError } from '../../util/errors.js';
import { errorMessage, isMoatError, runtimeError } from '../../util/errors.js';
import { log } from '../../util/log.js';
import { openSystemBrowser } from './browser.js';
import { startCallbackServer } from './callback-server.js';
import {
  defaultEndpoints,
  discoverAuthorizationServer,
  discoverResource,
  parseWwwAuthenticate,
  type AuthorizationServerMetadata,
  type Fetch,
} from './discovery.js';
import type { RemoteOAuthSettings } from './oauth-settings.js';
import type { ClientRegistration, OAuthStore, StoredTokens } from './token-store.js';
import { checkDiscoveredUrl, needsInsecureHttp } from './url-guard.js';

/** What the workload records about outbound authentication. */
export type RemoteAuthStatus = { state: 'authenticated' } | { state: 'reauth_required'; reason: string };

export interface RemoteOAuthDeps {
  store: OAuthStore;
  fetch?: Fetch;
  now?: () => number;
  /** Shows the authorization URL; default: the system browser (skipped with skip_browser). */
  openBrowser?: (url: string) => Promise<boolean>;
  /** A message for the person running moat (the login URL). Default: stderr. */
  notify?: (message: string) => void;
  onStatus?: (status: RemoteAuthStatus) => void;
  /** Whether a browser login may start when there is no usable token (default true); if not, start fails. */
  interactive?: boolean;
  /** Start one browser login by itself when the tokens die while the workload runs (foreground). */
  autoLogin?: boolean;
}

/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_MS = 60_000;

interface ResolvedServer {
  metadata: AuthorizationServerMetadata;
  resource?: string;
  scopes: string[];
}

interface ClientCredentials {
  clientId: string;
  clientSecret?: string;
  method: string;
  /** For a dynamically registered client: the redirect URIs it was registered with. */
  redirectUris?: string[];
}

export class RemoteOAuth {
  private tokens: StoredTokens | undefined;
  private refreshing: Promise<boolean> | undefined;
  private reauthReason: string | undefined;
  private lastState: RemoteAuthStatus['state'] | undefined;
  /** Start finished: from now on a dead token may trigger the one background login. */
  private running = false;
  private loggingIn: Promise<void> | undefined;
  private client: ClientCredentials | undefined;
  private config: oidc.Configuration | undefined;
  private readonly fetch: Fetch;
  private readonly now: () => number;

  private constructor(
    private readonly settings: RemoteOAuthSettings,
    private readonly deps: RemoteOAuthDeps,
    private readonly server: ResolvedServer,
  ) {
    this.fetch = deps.fetch ?? fetch;
    this.now = deps.now ?? Date.now;
  }

  /**
   * Discovers, gets a client and a usable token (stored, refreshed, or through a browser login);
   * throws when there is none. Undefined when the remote does not ask for authentication at all.
   */
  static async start(settings: RemoteOAuthSettings, deps: RemoteOAuthDeps): Promise<RemoteOAuth | undefined> {
    const server = await resolveServer(settings, deps.fetch ?? fetch);
    if (!server) {
      log().warn(
        { workload: settings.workload, remote: settings.remoteUrl },
        'the remote server did not ask for authentication (no 401, no protected-resource metadata); continuing without OAuth',
      );
      return undefined;
    }
    const oauth = new RemoteOAuth(settings, deps, server);
    const client = await existingClient(settings, server, deps.store);
    if (client) oauth.useClient(client);
    const stored = await deps.store.tokens(settings.workload);
    if (
      client &&
      stored &&
      stored.issuer === server.metadata.issuer &&
      stored.client_id === client.clientId
    ) {
      oauth.tokens = stored;
      if (!oauth.expiresSoon() || (await oauth.refresh())) {
        oauth.setStatus({ state: 'authenticated' });
        oauth.running = true;
        return oauth;
      }
    }
    if (deps.interactive === false) {
      // A detached supervisor: `moat run`/`moat start` log in on the terminal before it starts, so
      // no stored token here means they could not keep one (a read-only secrets provider).
      throw runtimeError(
        `no usable OAuth token for ${settings.remoteUrl} and no terminal to log in from: keep tokens in a writable secrets provider (MOAT_SECRETS_PROVIDER=encrypted) or run with --foreground`,
      );
    }
    await oauth.login();
    oauth.running = true;
    return oauth;
  }

  private useClient(client: ClientCredentials): void {
    this.client = client;
    this.config = buildConfiguration(this.server.metadata, client, this.fetch);
  }

  /** The Authorization header for the next upstream request. */
  async headers(): Promise<Record<string, string>> {
    if (this.reauthReason) throw this.reauthError();
    if (this.expiresSoon() && !(await this.refresh())) throw this.reauthError();
    return { Authorization: `Bearer ${this.tokens!.access_token}` };
  }

  /** An upstream 401 refreshes once; a 403 insufficient_scope steps up the scope (see stepUp). */
  async onUnauthorized(wwwAuthenticate: string | undefined): Promise<boolean> {
    if (this.reauthReason) return false;
    const challenge = parseWwwAuthenticate(wwwAuthenticate);
    if (challenge?.params.error === 'insufficient_scope') return this.stepUp(challenge.params.scope);
    return this.refresh(true);
  }

  /**
   * MCP scope step-up (a 403 insufficient_scope): ask for the scopes the remote names on top of the
   * current ones. With autoLogin the browser login runs now and the request may be retried;
   * otherwise the status says a new login is needed.
   */
  private async stepUp(scope: string | undefined): Promise<boolean> {
    const more = scope?.split(' ').filter(Boolean) ?? [];
    this.server.scopes = [...new Set([...this.server.scopes, ...more])];
    if (!this.running || !this.deps.autoLogin) {
      this.markReauth(`the remote server needs more scope (${scope ?? 'unspecified'}); log in again`);
      return false;
    }
    try {
      await this.loginOnce();
      return true;
    } catch {
      return false;
    }
  }

  /** One login at a time: concurrent step-ups and a background re-login share it. */
  private loginOnce(): Promise<void> {
    this.loggingIn ??= this.login().finally(() => (this.loggingIn = undefined));
    return this.loggingIn;
  }

  /** Runs the browser login (authorization code + PKCE S256) and stores the tokens. */
  async login(): Promise<void> {
    const callback = await startCallbackServer(this.settings.callbackPort);
    try {
      // A registered client must list this redirect URI; register (again) when it does not.
      if (
        !this.client ||
        (this.client.redirectUris && !this.client.redirectUris.includes(callback.redirectUri))
      ) {
        const registration = await registerClient(
          this.settings,
          this.server,
          this.fetch,
          callback.redirectUri,
        );
        await this.deps.store.saveRegistration(registration);
        this.useClient(clientFromRegistration(registration));
      }
      const config = this.config!;
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const params: Record<string, string> = {
        ...this.settings.extraParams,
        redirect_uri: callback.redirectUri,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      };
      if (this.server.scopes.length > 0)
        params[this.settings.scopeParamName ?? 'scope'] = this.server.scopes.join(' ');
      if (this.server.resource) params.resource = this.server.resource;
      const url = oidc.buildAuthorizationUrl(config, params).href;
      const notify = this.deps.notify ?? ((m: string) => process.stderr.write(`${m}\n`));
      const opened =
        !this.settings.skipBrowser &&
        (await (this.deps.openBrowser ?? openSystemBrowser)(url).catch(() => false));
      notify(
        opened
          ? `Opened a browser to log in to ${this.server.metadata.issuer}. If it did not appear, open:\n${url}`
          : `Open this URL in a browser to log in to ${this.server.metadata.issuer}:\n${url}`,
      );
      const callbackUrl = await callback.waitForCallback(state, this.settings.timeoutMs);
      const response = await this.tokenCall('exchange the authorization code', () =>
        oidc.authorizationCodeGrant(
          config,
          callbackUrl,
          { pkceCodeVerifier: verifier, expectedState: state },
          this.server.resource ? { resource: this.server.resource } : undefined,
        ),
      );
      await this.saveTokens(response);
      this.reauthReason = undefined;
      this.setStatus({ state: 'authenticated' });
    } catch (err) {
      this.markReauth(isMoatError(err) ? err.message : String(err));
      throw err;
    } finally {
      await callback.close();
    }
  }

  private expiresSoon(): boolean {
    if (!this.tokens) return true;
    return this.tokens.expires_at !== undefined && this.now() >= this.tokens.expires_at - REFRESH_MARGIN_MS;
  }

  /** Single-flight refresh; false when the refresh token is missing or refused (a login is needed). */
  private refresh(force = false): Promise<boolean> {
    this.refreshing ??= this.doRefresh(force).finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async doRefresh(force: boolean): Promise<boolean> {
    if (!force && !this.expiresSoon()) return true;
    const refreshToken = this.tokens?.refresh_token;
    if (!refreshToken) {
      this.markReauth(
        'the access token expired and the authorization server gave no refresh token; log in again',
      );
      return false;
    }
    try {
      const response = await oidc.refreshTokenGrant(
        this.config!,
        refreshToken,
        this.server.resource ? { resource: this.server.resource } : undefined,
      );
      await this.saveTokens(response, refreshToken);
      this.setStatus({ state: 'authenticated' });
      return true;
    } catch (err) {
      const refused = oauthErrorOf(err);
      if (refused) {
        await this.deps.store.forgetTokens(this.settings.workload);
        this.markReauth(
          `the authorization server refused the refresh token (${refused.error}); log in again`,
        );
        return false;
      }
      // A network failure is transient: keep the tokens and let the request fail this time.
      throw runtimeError(
        `cannot refresh the OAuth token at ${this.server.metadata.issuer}: ${(err as Error).message}`,
        {
          httpStatus: 502,
        },
      );
    }
  }

  private async saveTokens(
    response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
    previousRefresh?: string,
  ) {
    const expiresIn = response.expiresIn();
    this.tokens = {
      issuer: this.server.metadata.issuer,
      client_id: this.client!.clientId,
      resource: this.server.resource,
      access_token: response.access_token,
      refresh_token: response.refresh_token ?? previousRefresh,
      expires_at: expiresIn !== undefined ? this.now() + expiresIn * 1000 : undefined,
      scope: response.scope,
    };
    await this.deps.store.saveTokens(this.settings.workload, this.tokens);
  }

  private async tokenCall<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw describeOAuthError(err, what, this.server.metadata.issuer);
    }
  }

  private markReauth(reason: string): void {
    const first = this.reauthReason === undefined;
    this.reauthReason = reason;
    // While starting, a failure ends in a login or an error from start(), not in a status change.
    if (first && this.running) {
      log().warn({ workload: this.settings.workload, reason }, 'remote server needs a new OAuth login');
      this.setStatus({ state: 'reauth_required', reason });
      this.loginOnceInBackground();
    }
  }

  /**
   * With autoLogin (a workload in the foreground of a terminal), tokens that die at run time start
   * one browser login by itself; requests fail fast meanwhile. If that login fails, the status stays
   * `reauth_required`: one attempt, never a loop.
   */
  private loginOnceInBackground(): void {
    if (!this.running || !this.deps.autoLogin || this.loggingIn) return;
    this.loginOnce().catch((err: unknown) =>
      log().warn({ workload: this.settings.workload, err: errorMessage(err) }, 'the new OAuth login failed'),
    );
  }

  /** Reports a status change (not a repeat of the current state). */
  private setStatus(status: RemoteAuthStatus): void {
    if (status.state === 'authenticated') this.reauthReason = undefined;
    if (status.state === this.lastState) return;
    this.lastState = status.state;
    this.deps.onStatus?.(status);
  }

  /** 502 like any upstream credential failure: the proxy's credentials are at fault, not the client's. */
  private reauthError(): MoatError {
    return runtimeError(
      `the remote server needs a new OAuth login (${this.reauthReason}); run: moat restart ${this.settings.workload}`,
      { httpStatus: 502 },
    );
  }
}

/** The OAuth error of a token-endpoint answer: in the JSON body, or (for a 401) in its WWW-Authenticate challenge. */
function oauthErrorOf(err: unknown): { error: string; error_description?: string } | undefined {
  if (err instanceof oidc.ResponseBodyError) return err;
  if (err instanceof oidc.WWWAuthenticateChallengeError) {
    const parameters = err.cause[0]?.parameters;
    return { error: parameters?.error ?? 'unauthorized', error_description: parameters?.error_description };
  }
  return undefined;
}

/** Turns openid-client errors into one line naming the step, the server and its OAuth error. */
export function describeOAuthError(err: unknown, what: string, issuer: string): MoatError {
  if (isMoatError(err)) return err;
  const oauthError = oauthErrorOf(err);
  if (oauthError) {
    const hint = oauthError.error === 'invalid_client' ? ': check the client ID and secret' : '';
    const description = oauthError.error_description ? ` (${oauthError.error_description})` : '';
    return runtimeError(`${issuer} refused to ${what}: ${oauthError.error}${description}${hint}`);
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return runtimeError(
      `${issuer} refused the login: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
    );
  }
  return runtimeError(`cannot ${what} at ${issuer}: ${(err as Error).message}`);
}

/** The authorization server, the RFC 8707 resource and the scopes to ask for. */
/** The endpoints an authorization server's metadata names get the discovered-URL rules. */
function checkEndpoints(metadata: AuthorizationServerMetadata, remoteUrl: string): void {
  for (const key of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint'] as const) {
    const value = metadata[key];
    if (value) checkDiscoveredUrl(value, remoteUrl, key);
  }
}

/** Undefined when the remote neither answers 401 nor publishes protected-resource metadata. */
async function resolveServer(
  settings: RemoteOAuthSettings,
  fetchImpl: Fetch,
): Promise<ResolvedServer | undefined> {
  const { remoteUrl } = settings;
  if (settings.authorizeUrl && settings.tokenUrl) {
    return {
      metadata: {
        issuer: settings.issuer ?? new URL(settings.authorizeUrl).origin,
        authorization_endpoint: settings.authorizeUrl,
        token_endpoint: settings.tokenUrl,
      },
      resource: settings.resource,
      scopes: settings.scopes ?? [],
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
    };
  }
  const discovered = await discoverResource(remoteUrl, fetchImpl);
  const prm = discovered.metadata;
  let metadata: AuthorizationServerMetadata | undefined;
  if (prm?.authorization_servers?.[0]) {
    const issuer = checkDiscoveredUrl(prm.authorization_servers[0], remoteUrl, 'authorization server').href;
    metadata = (await discoverAuthorizationServer(issuer, fetchImpl))?.metadata;
    if (!metadata)
      throw runtimeError(`no OAuth metadata found for the authorization server ${issuer} of ${remoteUrl}`);
  } else if (!discovered.unauthorized) {
    return undefined;
  } else {
    // 2025-03-26 servers: the authorization server is the MCP server's origin, with default endpoints.
    metadata =
      (await discoverAuthorizationServer(new URL(remoteUrl).origin, fetchImpl, { legacy: true }))?.metadata ??
      defaultEndpoints(remoteUrl);
  }
  checkEndpoints(metadata, remoteUrl);
  const resource = settings.resource ?? (prm ? checkResource(prm.resource, remoteUrl) : undefined);
  const challengeScope = discovered.challenge?.params.scope?.split(' ').filter(Boolean);
  const scopes = settings.scopes ?? (challengeScope?.length ? challengeScope : (prm?.scopes_supported ?? []));
  return { metadata, resource, scopes };
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

/** The token-endpoint authentication to use (or ask for in a registration), from what the server supports. */
function chooseAuthMethod(metadata: AuthorizationServerMetadata, hasSecret: boolean): string {
  if (!hasSecret) return 'none';
  const supported = metadata.token_endpoint_auth_methods_supported;
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return supported.includes('none') ? 'none' : 'client_secret_basic';
}

/** An explicit client, or the registration stored for this issuer (unless its secret expired). */
async function existingClient(
  settings: RemoteOAuthSettings,
  server: ResolvedServer,
  store: OAuthStore,
): Promise<ClientCredentials | undefined> {
  if (settings.clientId) {
    return {
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      method: chooseAuthMethod(server.metadata, Boolean(settings.clientSecret)),
    };
  }
  const stored = await store.registration(server.metadata.issuer);
  if (!stored) return undefined;
  const expired = stored.client_secret_expires_at
    ? stored.client_secret_expires_at * 1000 <= Date.now()
    : false;
  return expired ? undefined : clientFromRegistration(stored);
}

function clientFromRegistration(registration: ClientRegistration): ClientCredentials {
  return {
    clientId: registration.client_id,
    clientSecret: registration.client_secret,
    method: registration.token_endpoint_auth_method,
    redirectUris: registration.redirect_uris,
  };
}

/** RFC 7591 dynamic client registration as a native app with a loopback redirect (RFC 8252). */
async function registerClient(
  settings: RemoteOAuthSettings,
  server: ResolvedServer,
  fetchImpl: Fetch,
  redirectUri: string,
): Promise<ClientRegistration> {
  const { metadata } = server;
  if (!metadata.registration_endpoint) {
    throw runtimeError(
      `the authorization server ${metadata.issuer} does not support dynamic client registration; register a client there and pass --remote-auth-client-id (and --remote-auth-client-secret-file if it has a secret)`,
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
