/**
 * OAuth 2.1 to a remote MCP server (openid-client v6): find the authorization server, get a client
 * (see oauth-client.ts), log in with authorization code + PKCE S256 and an RFC 8707 resource
 * through a loopback callback, checking the response's issuer (RFC 9207), then keep the tokens
 * fresh: refreshed shortly before expiry and on an upstream 401. Tokens are kept per issuer, and a
 * remote that moves to another authorization server gets a client and a login there, never the
 * first server's tokens. When only a new login would help, the status hook reports
 * `reauth_required` once and requests fail fast instead of looping through refresh attempts.
 */
import * as oidc from 'openid-client';
import type { MoatError } from '../../util/errors.js';
import { errorMessage, isMoatError, runtimeError } from '../../util/errors.js';
import { log } from '../../util/log.js';
import { openSystemBrowser } from './browser.js';
import { startCallbackServer } from './callback-server.js';
import { parseWwwAuthenticate, type BearerChallenge, type Fetch } from './discovery.js';
import { checkResponseIssuer } from './issuer-check.js';
import {
  buildConfiguration,
  clientFromRegistration,
  existingClient,
  registerClient,
  type ClientCredentials,
} from './oauth-client.js';
import type { RemoteOAuthSettings } from './oauth-settings.js';
import { movedAuthorizationServer, resolveServer, type ResolvedServer } from './resolve-server.js';
import type { OAuthStore, StoredTokens, TokenKey } from './token-store.js';

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
    private server: ResolvedServer,
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
    if (await oauth.useStoredTokens(settings)) {
      oauth.setStatus({ state: 'authenticated' });
      oauth.running = true;
      return oauth;
    }
    if (deps.interactive === false) {
      // A detached supervisor: `moat run`/`moat start` log in on the terminal before it starts, so
      // no stored token here means they could not keep one (a read-only secrets provider).
      throw runtimeError(
        `no usable OAuth token for ${settings.remoteUrl} and no terminal to log in from: keep tokens in a writable secrets provider (MOAT_SECRETS_PROVIDER=encrypted) or run with --foreground`,
      );
    }
    if (server.challengeLater && deps.autoLogin) {
      // In the foreground: log in at the remote's first 401, with the scope it names.
      log().info(
        { workload: settings.workload, issuer: server.metadata.issuer },
        'the remote server answered without asking for a token; logging in at its first 401',
      );
    } else {
      await oauth.login();
    }
    oauth.running = true;
    return oauth;
  }

  /**
   * Takes the client for the current authorization server and its stored tokens for this resource
   * (refreshed when due); false when a login is needed.
   */
  private async useStoredTokens(settings: RemoteOAuthSettings): Promise<boolean> {
    const client = await existingClient(settings, this.server.metadata, this.deps.store);
    // Nothing of another authorization server may remain (see followMove).
    this.client = undefined;
    this.config = undefined;
    this.tokens = undefined;
    if (client) this.useClient(client);
    const stored = await this.deps.store.tokens(settings.workload, this.tokenKey());
    if (!client || !stored || stored.issuer !== this.server.metadata.issuer) return false;
    if (stored.client_id !== client.clientId) return false;
    this.tokens = stored;
    const usable = !this.expiresSoon() || (await this.refresh());
    if (!usable) this.tokens = undefined;
    return usable;
  }

  private tokenKey(): TokenKey {
    return { issuer: this.server.metadata.issuer, resource: this.server.resource };
  }

  private useClient(client: ClientCredentials): void {
    this.client = client;
    this.config = buildConfiguration(this.server.metadata, client, this.fetch);
  }

  /** The Authorization header for the next upstream request. */
  async headers(): Promise<Record<string, string>> {
    if (this.reauthReason) throw this.reauthError();
    // No token yet: the remote has not asked for one (see start).
    if (!this.tokens) return {};
    if (this.expiresSoon() && !(await this.refresh())) throw this.reauthError();
    return { Authorization: `Bearer ${this.tokens.access_token}` };
  }

  /**
   * An upstream 401 first checks whether the remote moved to another authorization server, then
   * logs in (the first challenge) or refreshes once; a 403 insufficient_scope steps up the scope.
   */
  async onUnauthorized(wwwAuthenticate: string | undefined): Promise<boolean> {
    if (this.reauthReason) return false;
    const challenge = parseWwwAuthenticate(wwwAuthenticate);
    if (challenge?.params.error === 'insufficient_scope') return this.stepUp(challenge.params.scope);
    if (await this.followMove(challenge)) return this.tokens !== undefined || this.loginNow();
    if (!this.tokens) {
      const scope = challenge?.params.scope?.split(' ').filter(Boolean);
      if (scope?.length && !this.settings.scopes) this.server.scopes = scope;
      return this.loginNow();
    }
    return this.refresh(true);
  }

  /**
   * SEP-2352: when the remote's metadata names another authorization server, switch to it: its own
   * client (a configured client ID belongs to the first server and is not carried over) and its
   * own stored tokens. The first server's tokens stay stored under its issuer and are never sent
   * to the new one. True when the server changed.
   */
  private async followMove(challenge: BearerChallenge | undefined): Promise<boolean> {
    const moved = await movedAuthorizationServer(this.server, this.settings.remoteUrl, challenge, this.fetch);
    if (!moved) return false;
    log().warn(
      { workload: this.settings.workload, from: this.server.metadata.issuer, to: moved.issuer },
      'the remote server moved to another authorization server',
    );
    const scope = challenge?.params.scope?.split(' ').filter(Boolean);
    this.server = {
      ...this.server,
      metadata: moved,
      scopes: this.settings.scopes ?? (scope?.length ? scope : this.server.scopes),
    };
    if (await this.useStoredTokens({ ...this.settings, clientId: undefined, clientSecret: undefined })) {
      this.setStatus({ state: 'authenticated' });
    }
    return true;
  }

  /** A login needed to serve this request: now in the foreground, else the status says so. */
  private async loginNow(): Promise<boolean> {
    if (!this.deps.autoLogin) {
      this.markReauth(`the remote server asks for a login at ${this.server.metadata.issuer}`);
      return false;
    }
    try {
      await this.loginOnce();
      return true;
    } catch {
      return false;
    }
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
    return this.loginNow();
  }

  /** One login at a time: concurrent step-ups and a background re-login share it. */
  private loginOnce(): Promise<void> {
    this.loggingIn ??= this.login().finally(() => (this.loggingIn = undefined));
    return this.loggingIn;
  }

  /**
   * Runs the browser login (authorization code + PKCE S256) and stores the tokens. An
   * authorization server that advertises client ID metadata documents yet refuses ours (at the
   * authorize or token step) gets one more login with a dynamic registration, which is stored
   * marked so, and so remembered for that issuer (oauth-client.ts).
   */
  async login(): Promise<void> {
    try {
      try {
        await this.loginAttempt();
      } catch (err) {
        const code = oauthErrorCode(err);
        const usedCimd = this.client?.clientId === this.settings.clientMetadataUrl;
        if (!usedCimd || code === undefined || !CLIENT_REFUSALS.has(code)) throw err;
        log().warn(
          { workload: this.settings.workload, issuer: this.server.metadata.issuer, error: code },
          'the authorization server refused our client ID metadata document as client_id; falling back to dynamic client registration, remembered for this issuer',
        );
        this.client = undefined;
        this.config = undefined;
        await this.loginAttempt(true);
      }
      this.reauthReason = undefined;
      this.setStatus({ state: 'authenticated' });
    } catch (err) {
      this.markReauth(isMoatError(err) ? err.message : String(err));
      throw err;
    }
  }

  private async loginAttempt(cimdRefused = false): Promise<void> {
    const callback = await startCallbackServer(this.settings.callbackPort);
    try {
      // A registered client must list this redirect URI; register (again) when it does not.
      if (
        !this.client ||
        (this.client.redirectUris && !this.client.redirectUris.includes(callback.redirectUri))
      ) {
        const registered = await registerClient(
          this.settings,
          this.server.metadata,
          this.fetch,
          callback.redirectUri,
        );
        // A new registration (another redirect URI) keeps the issuer's refusal of our document.
        const marked = cimdRefused || this.client?.cimdRefused === true;
        await this.deps.store.saveRegistration(marked ? { ...registered, cimdRefused: true } : registered);
        this.useClient(clientFromRegistration(registered));
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
      const callbackUrl = checkResponseIssuer(
        await callback.waitForCallback(state, this.settings.timeoutMs),
        this.server.metadata,
        this.server.issuerKnown,
      );
      const response = await this.tokenCall('exchange the authorization code', () =>
        oidc.authorizationCodeGrant(
          config,
          callbackUrl,
          { pkceCodeVerifier: verifier, expectedState: state },
          this.server.resource ? { resource: this.server.resource } : undefined,
        ),
      );
      await this.saveTokens(response);
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
        await this.deps.store.forgetTokens(this.settings.workload, this.tokenKey());
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

/** The OAuth error code behind a failed login step (the error itself or what it wraps). */
function oauthErrorCode(err: unknown): string | undefined {
  for (let at = err, depth = 0; at !== undefined && depth < 3; at = (at as Error).cause, depth++) {
    const code =
      oauthErrorOf(at)?.error ??
      (at instanceof oidc.AuthorizationResponseError ? at.error : undefined) ??
      (typeof at === 'object' && at !== null && typeof (at as { error?: unknown }).error === 'string'
        ? (at as { error: string }).error
        : undefined);
    if (code) return code;
  }
  return undefined;
}

/** How an authorization server refuses a client id it does not accept (here: a CIMD URL). */
const CLIENT_REFUSALS = new Set(['invalid_client', 'unauthorized_client']);

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
    return runtimeError(`${issuer} refused to ${what}: ${oauthError.error}${description}${hint}`, {
      cause: err,
    });
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return runtimeError(
      `${issuer} refused the login: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
      { cause: err },
    );
  }
  return runtimeError(`cannot ${what} at ${issuer}: ${(err as Error).message}`);
}
