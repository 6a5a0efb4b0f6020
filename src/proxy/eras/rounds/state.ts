/**
 * The `requestState` Moat hands a 2026-07-28 client with an InputRequiredResult, and checks when
 * the client retries. The client echoes it byte for byte, but it is attacker-controlled input, so
 * it is sealed with AES-256-GCM under the proxy's key: the client can neither read it (it names
 * Moat's round id) nor change a bit of it unnoticed (GCM's tag, checked in constant time by
 * OpenSSL). Inside: a unique round id (single use, see single-use.ts), the principal it was issued
 * to, an expiry, and a digest of the request it belongs to.
 *
 * Format: `m1.` + base64url(12-byte IV ‖ ciphertext ‖ 16-byte tag), the plaintext a small JSON object.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'm1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const STATE_KEY_BYTES = 32;
/**
 * Bound on what is decoded at all: Moat's own state is about 250 characters; one carrying a
 * server's state grows with it (sealServerState refuses to carry more than fits).
 */
export const MAX_STATE_CHARS = 65_536;
/** Binds the ciphertext to this use and format version (a key used elsewhere cannot be confused). */
const AAD = Buffer.from('moat request state v1');

/** What a sealed state says. */
export interface StateClaims {
  /** The round's unique id: consumed on first use, and the name of its relay channel. */
  id: string;
  /** Who it was issued to (sessions/binding.ts principalOf; '' for the unauthenticated local user). */
  principal: string;
  /** Expiry, ms since the epoch. */
  exp: number;
  /** requestDigest() of the request the round belongs to. */
  digest: string;
  /** A 2026 server's own requestState, carried for the server (then Moat holds no round). */
  server?: string;
}

/** Why a state was refused; each is said to the client in its own words. */
export type StateRefusal = 'malformed' | 'tampered' | 'expired' | 'other-principal' | 'other-request';

export const REFUSAL_TEXT: Record<StateRefusal, string> = {
  malformed: 'params.requestState is not a request state this proxy issued',
  tampered: 'params.requestState failed its integrity check (it was changed, or sealed with another key)',
  expired: 'params.requestState has expired; send the request again without requestState and inputResponses',
  'other-principal': 'params.requestState was issued to another user',
  'other-request': 'params.requestState belongs to a different request (method or params changed)',
};

/** Request fields that carry the round trip itself, not what is asked: left out of the digest. */
const RETRY_FIELDS = new Set(['inputResponses', 'requestState', '_meta']);

/** JSON with object keys sorted at every level, so equal values always give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 (base64url) of the method and the params without `inputResponses`, `requestState` and `_meta`. */
export function requestDigest(method: string, params: Record<string, unknown> | undefined): string {
  const asked: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params ?? {})) if (!RETRY_FIELDS.has(k)) asked[k] = v;
  return createHash('sha256')
    .update(canonicalJson([method, asked]))
    .digest('base64url');
}

/** Equal strings, compared in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

export class RequestStateCodec {
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(key: Buffer, now: () => number = Date.now) {
    if (key.length !== STATE_KEY_BYTES) throw new Error(`request state key must be ${STATE_KEY_BYTES} bytes`);
    this.#key = key;
    this.#now = now;
  }

  seal(claims: StateClaims): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(JSON.stringify(claims), 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /**
   * Opens a state and checks it against the retry: issued to `principal`, not expired, for a
   * request with `digest`. Integrity first: nothing in a state that fails it is looked at.
   */
  open(
    token: unknown,
    expected: { principal: string; digest: string },
  ): { claims: StateClaims } | { refusal: StateRefusal } {
    const raw = this.#decode(token);
    if (raw === undefined) return { refusal: 'malformed' };
    const claims = this.#decrypt(raw);
    if (claims === undefined) return { refusal: 'tampered' };
    if (claims.exp <= this.#now()) return { refusal: 'expired' };
    if (!sameText(claims.principal, expected.principal)) return { refusal: 'other-principal' };
    if (!sameText(claims.digest, expected.digest)) return { refusal: 'other-request' };
    return { claims };
  }

  #decode(token: unknown): Buffer | undefined {
    if (typeof token !== 'string' || token.length > MAX_STATE_CHARS || !token.startsWith(PREFIX))
      return undefined;
    const text = token.slice(PREFIX.length);
    // Strict base64url: Buffer.from() would skip characters it does not know.
    if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
    const raw = Buffer.from(text, 'base64url');
    return raw.length > IV_BYTES + TAG_BYTES ? raw : undefined;
  }

  #decrypt(raw: Buffer): StateClaims | undefined {
    const iv = raw.subarray(0, IV_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    const body = raw.subarray(IV_BYTES, raw.length - TAG_BYTES);
    let value: Partial<StateClaims>;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(AAD);
      decipher.setAuthTag(tag);
      const text = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
      value = JSON.parse(text) as Partial<StateClaims>;
    } catch {
      return undefined;
    }
    // Sealed by this proxy, so well formed; checked anyway (defence in depth, it costs nothing).
    if (
      typeof value.id !== 'string' ||
      typeof value.principal !== 'string' ||
      typeof value.exp !== 'number' ||
      typeof value.digest !== 'string' ||
      (value.server !== undefined && typeof value.server !== 'string')
    )
      return undefined;
    return value as StateClaims;
  }
}
