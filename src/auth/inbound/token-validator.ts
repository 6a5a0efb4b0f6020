/**
 * Validates bearer tokens as an OAuth 2.1 resource server:
 * - JWTs against the issuer's JWKS (explicit --oidc-jwks-url, else `jwks_uri` from OIDC discovery,
 *   fetched lazily with retries). The key set is cached; a token with an unknown `kid` triggers a
 *   refetch (rate-limited), so key rotation at the provider just works.
 * - Opaque tokens with RFC 7662 introspection (--oidc-introspection-url).
 * Then checks `iss`, `aud`, `exp`/`nbf` (small clock skew) and the required scopes.
 *
 * A JWT that passed every check is remembered (by its exact bytes, bounded LRU) and later
 * requests with the same bytes skip the signature check, until the first of: its `exp`; the
 * JWKS cache age (so the key set is fetched again as often as without this cache); a JWKS fetch
 * that no longer publishes the key id that signed it (a key the issuer withdrew stops working at
 * once, as it would uncached). Safe because a signature check is a pure function of the token's
 * bytes and the key: the same bytes under the same published key verify the same way, and the
 * claims checks (`iss`, `aud`, `nbf`) depend only on those bytes and settings fixed for this
 * validator. Refusals are never cached. An entry is found by the token's last characters (the
 * end of its signature) and used only when the whole token equals the remembered one: hashing an
 * 800-character token for a map lookup cost about 2 µs per request, a SHA-256 more; the end of a
 * signature is as unpredictable as the rest of it, so two tokens that share it are vanishingly
 * rare (and only cost a cache miss), and the full comparison is reached only by a caller who
 * already holds that secret end. The identity built from the claims keeps the token anyway (for
 * token exchange), so the cache holds no more than before.
 */
import { createHash } from 'node:crypto';
import {
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type FetchImplementation,
} from 'jose';
import { discard, IdpUnavailableError, type IdpHttpClient } from './idp-http.js';
import type { InboundAuthSettings } from './settings.js';
import { LruMap } from '../../util/lru.js';

export type Claims = Record<string, unknown>;

/** The token was refused; `kind` picks the HTTP status and the RFC 6750 error code. */
export class TokenRejectedError extends Error {
  override readonly name = 'TokenRejectedError';
  constructor(
    readonly kind: 'invalid_token' | 'insufficient_scope',
    message: string,
  ) {
    super(message);
  }
}

export interface TokenValidatorOptions {
  /** Allowed clock skew for exp/nbf/iat (seconds). */
  clockToleranceSeconds?: number;
  /** Minimum time between JWKS refetches triggered by an unknown kid. */
  jwksCooldownMs?: number;
  /** How long a fetched JWKS is used before it is refreshed. */
  jwksMaxAgeMs?: number;
  /** Discovery attempts and the first backoff (doubles, capped at 2 s). */
  discoveryAttempts?: number;
  discoveryBackoffMs?: number;
  /** The clock (tests move it forward instead of waiting). */
  now?: () => Date;
}

/** Asymmetric signature algorithms only: an HMAC "JWT" could be forged with a public key. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
const JWKS_MAX_BYTES = 512 * 1024;
const DISCOVERY_MAX_BYTES = 256 * 1024;
const INTROSPECTION_MAX_BYTES = 64 * 1024;
const INTROSPECTION_CACHE_MS = 60_000;
const INTROSPECTION_CACHE_ENTRIES = 10_000;
const VERIFIED_CACHE_ENTRIES = 10_000;
const DEFAULT_JWKS_MAX_AGE_MS = 10 * 60_000;
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export class TokenValidator {
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private jwksPending: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  private readonly clockTolerance: number;
  private readonly introspected = new Map<string, { claims: Claims; until: number }>();
  private readonly verified = new LruMap<string, VerifiedJwt>(VERIFIED_CACHE_ENTRIES);
  /** Key ids in the last JWKS fetched; undefined before the first fetch. */
  private publishedKids: ReadonlySet<string> | undefined;

  constructor(
    private readonly settings: InboundAuthSettings,
    private readonly http: IdpHttpClient,
    private readonly options: TokenValidatorOptions = {},
  ) {
    this.clockTolerance = options.clockToleranceSeconds ?? 30;
  }

  /** Returns the token's claims, or throws TokenRejectedError / IdpUnavailableError. */
  async validate(token: string): Promise<Claims> {
    const canVerifyJwt = Boolean(this.settings.jwksUrl || this.settings.issuer);
    let claims: Claims;
    if (JWS_COMPACT.test(token) && canVerifyJwt) {
      claims = await this.verifyJwtCached(token);
    } else if (this.settings.introspectionUrl) {
      claims = await this.introspectCached(token);
    } else {
      throw new TokenRejectedError('invalid_token', 'the token is not a JWT');
    }
    this.checkScopes(claims);
    return claims;
  }

  /**
   * The claims of a JWT whose earlier validation may still be reused, the scopes included (see
   * the file comment), without waiting; undefined when validate() must decide. The expiry and
   * the key's publication are checked again on every call.
   */
  remembered(token: string): Claims | undefined {
    const hit = this.reusableVerification(token, this.nowMs());
    return hit && this.missingScopes(hit.claims).length === 0 ? hit.claims : undefined;
  }

  /** The remembered verification of these exact bytes while it may be reused; forgets it after. */
  private reusableVerification(token: string, now: number): VerifiedJwt | undefined {
    const key = verifiedKey(token);
    const hit = this.verified.get(key);
    if (hit?.token !== token) return undefined;
    const keyStillPublished = hit.kid === undefined || this.publishedKids?.has(hit.kid) === true;
    if (now < hit.reuseUntil && keyStillPublished) return hit;
    this.verified.delete(key);
    return undefined;
  }

  /** A remembered verification of these exact bytes, or a full one (see the file comment). */
  private async verifyJwtCached(token: string): Promise<Claims> {
    const now = this.nowMs();
    const hit = this.reusableVerification(token, now);
    if (hit) return hit.claims;
    const claims = Object.freeze(await this.verifyJwt(token));
    const exp = (claims.exp as number) * 1000; // jwtVerify requires a numeric exp
    const kid = decodeProtectedHeader(token).kid;
    const jwksMaxAge = this.options.jwksMaxAgeMs ?? DEFAULT_JWKS_MAX_AGE_MS;
    this.verified.set(verifiedKey(token), {
      token,
      claims,
      reuseUntil: Math.min(exp, now + jwksMaxAge),
      kid,
    });
    return claims;
  }

  private nowMs(): number {
    return this.options.now ? this.options.now().getTime() : Date.now();
  }

  private async verifyJwt(token: string): Promise<Claims> {
    const jwks = await this.keySet();
    try {
      const { payload } = await jwtVerify(token, jwks, {
        algorithms: ALGORITHMS,
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: this.clockTolerance,
        requiredClaims: ['exp'],
        currentDate: this.options.now?.(),
      });
      return payload;
    } catch (err) {
      throw translateJoseError(err);
    }
  }

  /** The cached remote key set; discovery runs once, on first use, and again after a failure. */
  private async keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.jwks) return this.jwks;
    this.jwksPending ??= this.createKeySet().finally(() => {
      this.jwksPending = undefined;
    });
    this.jwks = await this.jwksPending;
    return this.jwks;
  }

  private async createKeySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const url = this.settings.jwksUrl ?? (await this.discoverJwksUri());
    this.http.checkUrl(url, 'jwks_uri');
    const fetchJwks: FetchImplementation = async (href, init) => {
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const response = await this.http.request(href, 'JWKS', { headers, signal: init.signal });
      if (response.status !== 200) {
        discard(response);
        throw new IdpUnavailableError(`JWKS ${href} answered HTTP ${response.status}`);
      }
      const json = await this.http.readJson(response, 'JWKS', JWKS_MAX_BYTES);
      this.publishedKids = keyIds(json);
      return new Response(JSON.stringify(json), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    };
    return createRemoteJWKSet(new URL(url), {
      headers: this.idpHeaders(),
      cooldownDuration: this.options.jwksCooldownMs ?? 30_000,
      cacheMaxAge: this.options.jwksMaxAgeMs ?? DEFAULT_JWKS_MAX_AGE_MS,
      [customFetch]: fetchJwks,
    });
  }

  private idpHeaders(): Record<string, string> {
    return this.settings.idpAuthToken ? { authorization: `Bearer ${this.settings.idpAuthToken}` } : {};
  }

  private async discoverJwksUri(): Promise<string> {
    const issuer = this.settings.issuer as string;
    const url = `${issuer}/.well-known/openid-configuration`;
    const attempts = this.options.discoveryAttempts ?? 3;
    let backoff = this.options.discoveryBackoffMs ?? 500;
    let lastError: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const response = await this.http.request(url, 'OIDC discovery', {
          headers: { accept: 'application/json', ...this.idpHeaders() },
        });
        if (response.status !== 200) {
          discard(response);
          throw new IdpUnavailableError(`OIDC discovery ${url} answered HTTP ${response.status}`);
        }
        const doc = (await this.http.readJson(response, 'OIDC discovery', DISCOVERY_MAX_BYTES)) as {
          issuer?: unknown;
          jwks_uri?: unknown;
        };
        if (typeof doc.issuer === 'string' && doc.issuer.replace(/\/+$/, '') !== issuer) {
          // Not retried: the provider is misconfigured (or an impostor), waiting does not help.
          throw Object.assign(
            new IdpUnavailableError(`OIDC discovery ${url} names issuer ${doc.issuer}, expected ${issuer}`),
            { permanent: true },
          );
        }
        if (typeof doc.jwks_uri !== 'string') {
          throw new IdpUnavailableError(`OIDC discovery ${url} has no jwks_uri`);
        }
        return doc.jwks_uri;
      } catch (err) {
        lastError = err;
        if ((err as { permanent?: boolean }).permanent || attempt === attempts) break;
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, 2_000);
      }
    }
    throw lastError;
  }

  /**
   * Active introspection results are reused for up to a minute (never past the token's `exp`),
   * keyed by the token's SHA-256, so a busy client does not cost one IdP round trip per request.
   * Refusals are not cached. A revoked token is therefore accepted for at most that minute.
   */
  private async introspectCached(token: string): Promise<Claims> {
    const key = tokenKey(token);
    const now = this.nowMs();
    const hit = this.introspected.get(key);
    if (hit && hit.until > now) {
      this.checkIntrospectedClaims(hit.claims);
      return hit.claims;
    }
    this.introspected.delete(key);
    const claims = await this.introspect(token);
    const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity;
    if (this.introspected.size >= INTROSPECTION_CACHE_ENTRIES) {
      for (const [k, v] of this.introspected) if (v.until <= now) this.introspected.delete(k);
      if (this.introspected.size >= INTROSPECTION_CACHE_ENTRIES) this.introspected.clear();
    }
    this.introspected.set(key, { claims, until: Math.min(now + INTROSPECTION_CACHE_MS, exp) });
    return claims;
  }

  private async introspect(token: string): Promise<Claims> {
    const url = this.settings.introspectionUrl as string;
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (this.settings.clientId) {
      // RFC 6749 §2.3.1: form-encode the credentials before base64.
      const user = encodeURIComponent(this.settings.clientId);
      const pass = encodeURIComponent(this.settings.clientSecret ?? '');
      headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    }
    const response = await this.http.request(url, 'token introspection', {
      method: 'POST',
      headers,
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    });
    if (response.status !== 200) {
      discard(response);
      throw new IdpUnavailableError(`token introspection ${url} answered HTTP ${response.status}`);
    }
    const body = await this.http.readJson(response, 'token introspection', INTROSPECTION_MAX_BYTES);
    if (typeof body !== 'object' || body === null) {
      throw new IdpUnavailableError(`token introspection ${url} answered a non-object`);
    }
    const claims = body as Claims;
    if (claims.active !== true) throw new TokenRejectedError('invalid_token', 'the token is not active');
    this.checkIntrospectedClaims(claims);
    return claims;
  }

  /** The checks jwtVerify makes, for claims that came from introspection. */
  private checkIntrospectedClaims(claims: Claims): void {
    const now = Math.floor(this.nowMs() / 1000);
    if (typeof claims.exp === 'number' && claims.exp + this.clockTolerance <= now) {
      throw new TokenRejectedError('invalid_token', 'the token has expired');
    }
    if (typeof claims.nbf === 'number' && claims.nbf - this.clockTolerance > now) {
      throw new TokenRejectedError('invalid_token', 'the token is not valid yet');
    }
    const { issuer, audience } = this.settings;
    if (issuer && typeof claims.iss === 'string' && claims.iss.replace(/\/+$/, '') !== issuer) {
      throw new TokenRejectedError('invalid_token', 'the token was issued by another issuer');
    }
    if (audience) {
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!aud.includes(audience)) {
        throw new TokenRejectedError('invalid_token', 'the token was issued for another audience');
      }
    }
  }

  private checkScopes(claims: Claims): void {
    const missing = this.missingScopes(claims);
    if (missing.length > 0) {
      throw new TokenRejectedError('insufficient_scope', `the token lacks scope ${missing.join(' ')}`);
    }
  }

  private missingScopes(claims: Claims): readonly string[] {
    const required = this.settings.requiredScopes;
    if (required.length === 0) return required;
    const granted = new Set(tokenScopes(claims));
    return required.filter((s) => !granted.has(s));
  }
}

interface VerifiedJwt {
  /** The whole token: an entry is used only for exactly these bytes. */
  token: string;
  claims: Claims;
  /** Epoch ms after which the token is verified again. */
  reuseUntil: number;
  /** The `kid` that signed it, when the header names one. */
  kid?: string;
}

/** Characters of the token's end that find its entry (see the file comment). */
const VERIFIED_KEY_CHARS = 32;

function verifiedKey(token: string): string {
  return token.slice(-VERIFIED_KEY_CHARS);
}

function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

function keyIds(jwks: unknown): ReadonlySet<string> {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  const kids = new Set<string>();
  if (Array.isArray(keys))
    for (const k of keys as Array<{ kid?: unknown }>) if (typeof k?.kid === 'string') kids.add(k.kid);
  return kids;
}

/** Scopes from `scope` (RFC 9068/7662, space-separated) or `scp` (Azure AD, Okta: string or array). */
export function tokenScopes(claims: Claims): string[] {
  const out: string[] = [];
  for (const value of [claims.scope, claims.scp]) {
    if (typeof value === 'string') out.push(...value.split(' ').filter(Boolean));
    else if (Array.isArray(value)) out.push(...value.filter((v): v is string => typeof v === 'string'));
  }
  return out;
}

/** Turns jose's errors into a short reason a client may see; provider failures stay IdpUnavailableError. */
function translateJoseError(err: unknown): Error {
  if (err instanceof IdpUnavailableError) return err;
  if (err instanceof joseErrors.JWTExpired)
    return new TokenRejectedError('invalid_token', 'the token has expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    const reasons: Record<string, string> = {
      iss: 'the token was issued by another issuer',
      aud: 'the token was issued for another audience',
      nbf: 'the token is not valid yet',
      exp: 'the token has no valid expiry',
      iat: 'the token has an invalid issue time',
    };
    return new TokenRejectedError('invalid_token', reasons[err.claim] ?? `claim ${err.claim} is invalid`);
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey) {
    return new TokenRejectedError('invalid_token', 'no key of the issuer matches the token');
  }
  if (err instanceof joseErrors.JWKSTimeout) return new IdpUnavailableError('JWKS request timed out');
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new TokenRejectedError('invalid_token', 'the token signature is invalid');
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed) {
    return new TokenRejectedError('invalid_token', 'the token signature algorithm is not allowed');
  }
  if (err instanceof joseErrors.JWKSInvalid || err instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new IdpUnavailableError(`the issuer's key set is unusable: ${err.message}`);
  }
  if (err instanceof joseErrors.JOSEError) {
    if (/JSON Web Key Set/.test(err.message)) return new IdpUnavailableError(err.message);
    return new TokenRejectedError('invalid_token', 'the token is malformed');
  }
  return err instanceof Error ? err : new Error(String(err));
}
