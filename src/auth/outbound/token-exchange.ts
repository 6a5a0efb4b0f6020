/**
 * RFC 8693 token exchange: the caller's validated inbound token is exchanged for a token for the
 * remote (audience, scopes), never forwarded itself. Results are cached per subject token (so per
 * subject and, with one configured audience, per audience) until shortly before they expire;
 * concurrent requests of one caller share one exchange.
 */
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import type { RunConfig, TokenExchangeConfig } from '../../config/runconfig.js';
import { resolveSecretRef } from '../../secrets/refs.js';
import type { SecretsProvider } from '../../secrets/types.js';
import { runtimeError, usageError } from '../../util/errors.js';
import type { Fetch } from './discovery.js';
import { readSecretFile } from './oauth-settings.js';
import { clientSecretBasic } from './oauth-client.js';
import { describeOAuthError } from './remote-oauth.js';
import { validateForwardHeaderName } from './static-headers.js';
import type { Identity } from '../../mcp/identity.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const CLIENT_SECRET_ENV = 'MOAT_TOKEN_EXCHANGE_CLIENT_SECRET';
const TOKEN_TYPE = {
  access_token: 'urn:ietf:params:oauth:token-type:access_token',
  id_token: 'urn:ietf:params:oauth:token-type:id_token',
} as const;
/** Stop using a cached token this long before it expires. */
const EXPIRY_MARGIN_MS = 30_000;
/** Without expires_in, keep an exchanged token this long. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;
const MAX_CACHE_ENTRIES = 10_000;

export interface TokenExchangeSettings {
  tokenUrl: string;
  clientId?: string;
  clientSecret?: string;
  audience?: string;
  scopes: string[];
  subjectTokenType: keyof typeof TOKEN_TYPE;
  /** The header carrying the exchanged token (Authorization unless --token-exchange-header-name). */
  headerName: string;
}

export async function resolveTokenExchangeSettings(
  te: TokenExchangeConfig,
  secrets: SecretsProvider,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TokenExchangeSettings> {
  let url: URL;
  try {
    url = new URL(te.token_url);
  } catch {
    throw usageError(`--token-exchange-url: ${JSON.stringify(te.token_url)} is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw usageError('--token-exchange-url must be an https URL');
  let clientSecret: string | undefined;
  if (te.client_secret)
    clientSecret = await resolveSecretRef(te.client_secret, secrets, '--token-exchange-client-secret');
  else if (te.client_secret_file) {
    clientSecret = await readSecretFile(te.client_secret_file, '--token-exchange-client-secret-file');
  } else clientSecret = env[CLIENT_SECRET_ENV] || undefined;
  if (clientSecret && !te.client_id)
    throw usageError('a token-exchange client secret needs --token-exchange-client-id');
  const custom = te.header_strategy === 'custom' || Boolean(te.external_token_header_name);
  const headerName = custom ? (te.external_token_header_name ?? '') : 'Authorization';
  if (custom) {
    if (!headerName)
      throw usageError('token_exchange_config.header_strategy custom needs --token-exchange-header-name');
    validateForwardHeaderName(headerName, '--token-exchange-header-name');
  }
  return {
    tokenUrl: te.token_url,
    clientId: te.client_id || undefined,
    clientSecret,
    audience: te.audience || undefined,
    scopes: (te.scopes ?? []).flatMap((s) => s.split(/[\s,]+/)).filter((s) => s !== ''),
    subjectTokenType: te.subject_token_type ?? 'access_token',
    headerName,
  };
}

interface CacheEntry {
  token: string;
  expiresAt: number;
}

export class TokenExchange {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();
  private readonly config: oidc.Configuration;
  private readonly now: () => number;

  constructor(
    private readonly settings: TokenExchangeSettings,
    deps: { fetch?: Fetch; now?: () => number } = {},
  ) {
    this.now = deps.now ?? Date.now;
    const { origin } = new URL(settings.tokenUrl);
    this.config = new oidc.Configuration(
      { issuer: origin, token_endpoint: settings.tokenUrl },
      settings.clientId ?? '',
      undefined,
      settings.clientSecret ? clientSecretBasic(settings.clientSecret) : oidc.None(),
    );
    const fetchImpl = deps.fetch ?? fetch;
    this.config[oidc.customFetch] = (url, options) => fetchImpl(url, options);
    if (new URL(settings.tokenUrl).protocol === 'http:') oidc.allowInsecureRequests(this.config);
  }

  async headers(identity: Identity): Promise<Record<string, string>> {
    if (!identity.token) {
      throw runtimeError("token exchange needs the caller's validated token, but the request carried none", {
        httpStatus: 401,
      });
    }
    const key = createHash('sha256').update(identity.token).digest('base64url');
    const cached = this.cache.get(key);
    const entry =
      cached && cached.expiresAt > this.now() ? cached : await this.exchangeOnce(key, identity.token);
    return { [this.settings.headerName]: `Bearer ${entry.token}` };
  }

  private exchangeOnce(key: string, subjectToken: string): Promise<CacheEntry> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.exchange(subjectToken)
        .then((entry) => {
          this.remember(key, entry);
          return entry;
        })
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async exchange(subjectToken: string): Promise<CacheEntry> {
    const params: Record<string, string> = {
      subject_token: subjectToken,
      subject_token_type: TOKEN_TYPE[this.settings.subjectTokenType],
      requested_token_type: TOKEN_TYPE.access_token,
    };
    if (this.settings.audience) params.audience = this.settings.audience;
    if (this.settings.scopes.length > 0) params.scope = this.settings.scopes.join(' ');
    let response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
    try {
      response = await oidc.genericGrantRequest(this.config, TOKEN_EXCHANGE_GRANT, params);
    } catch (err) {
      const error = describeOAuthError(err, "exchange the caller's token", this.settings.tokenUrl);
      throw runtimeError(error.message, { httpStatus: 502 });
    }
    const lifetime = response.expiresIn();
    const lifetimeMs = lifetime !== undefined ? lifetime * 1000 : DEFAULT_LIFETIME_MS;
    return { token: response.access_token, expiresAt: this.now() + lifetimeMs - EXPIRY_MARGIN_MS };
  }

  private remember(key: string, entry: CacheEntry): void {
    if (this.cache.size >= MAX_CACHE_ENTRIES) {
      const now = this.now();
      for (const [k, e] of this.cache) if (e.expiresAt <= now) this.cache.delete(k);
      // Still full: drop the oldest entries (Map keeps insertion order).
      for (const k of this.cache.keys()) {
        if (this.cache.size < MAX_CACHE_ENTRIES) break;
        this.cache.delete(k);
      }
    }
    this.cache.set(key, entry);
  }
}

/** True when token exchange is configured (--token-exchange-url). */
export function tokenExchangeRequested(config: RunConfig): boolean {
  return Boolean(config.token_exchange_config?.token_url);
}
