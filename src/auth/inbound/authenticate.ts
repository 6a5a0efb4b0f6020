/**
 * Inbound authentication: takes the Authorization header (the only place MCP allows a token),
 * validates the bearer token and returns who is calling, or the refusal to answer with: 401
 * (missing or invalid token) or 403 (insufficient scope) with an RFC 6750 challenge pointing at
 * the protected-resource metadata, or 503 when the identity provider cannot be reached (retrying
 * with a new token would not help). The proxy's edge turns a refusal into the HTTP answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { log } from '../../util/log.js';
import type { Identity } from '../../mcp/identity.js';
import { RPC, type JsonRpcError } from '../../mcp/jsonrpc.js';
import { IdpHttpClient, IdpUnavailableError } from './idp-http.js';
import { identityFromClaims } from './identity.js';
import {
  challengeHeader,
  PRM_PATH,
  resourceUrl,
  serveMetadata,
  type Challenge,
} from './resource-metadata.js';
import type { InboundAuthSettings } from './settings.js';
import {
  TokenRejectedError,
  TokenValidator,
  type Claims,
  type TokenValidatorOptions,
} from './token-validator.js';

/** Longer tokens are refused before any parsing (real access tokens are a few KiB at most). */
export const MAX_TOKEN_LENGTH = 8 * 1024;

/**
 * Who is calling, or how to refuse the request and what the refused caller presented (for the
 * audit: `none`, `authorization header: <why>`, `bearer token: <why>`; never the token).
 */
export type AuthOutcome =
  | { identity: Identity }
  | {
      refusal: {
        status: 401 | 403 | 503;
        error: JsonRpcError;
        headers: Record<string, string>;
        presented: string;
      };
    };

export interface InboundAuth {
  /** Checks the Authorization header of a request that reached the proxy at `externalBaseUrl`. */
  authenticate(authorization: string | undefined, externalBaseUrl: string): Promise<AuthOutcome>;
  /**
   * The caller's identity when the header is `Bearer <token>` with a token whose earlier
   * validation may still be reused (expiry, key and scopes checked again now), without waiting;
   * undefined when authenticate() must decide. The same answer authenticate() would give.
   */
  rememberedIdentity(authorization: string | undefined): Identity | undefined;
  /** Serves the RFC 9728 metadata at the root and path-inserted well-known URLs (an edge route). */
  route: {
    prefix: string;
    handle(req: IncomingMessage, res: ServerResponse, externalBaseUrl: string): void;
  };
  close(): Promise<void>;
}

export interface InboundAuthOptions extends TokenValidatorOptions {
  /** The MCP endpoint path clients use (`/mcp`, `/sse`); part of the derived resource URL. */
  mcpPath: string;
}

export function createInboundAuth(settings: InboundAuthSettings, options: InboundAuthOptions): InboundAuth {
  const http = new IdpHttpClient({
    allowHttp: settings.allowHttp,
    allowPrivateIp: settings.allowPrivateIp,
    caBundle: settings.caBundle,
  });
  const validator = new TokenValidator(settings, http, options);
  const names = { groupClaimName: settings.groupClaimName, roleClaimName: settings.roleClaimName };
  // The validator hands back the same frozen claims for the same token while it reuses a
  // verification, so the identity built from them is reused too (and later caches can key on it).
  const identities = new WeakMap<Claims, Identity>();
  const identityFor = (claims: Claims, token: string): Identity => {
    let identity = identities.get(claims);
    if (!identity) {
      const built = identityFromClaims(claims, names);
      Object.freeze(built.groups);
      Object.freeze(built.claims);
      identity = Object.freeze({ ...built, token });
      identities.set(claims, identity);
    }
    return identity;
  };

  const refuse = (
    externalBaseUrl: string,
    status: 401 | 403,
    challenge: Challenge,
    presented: string,
  ): AuthOutcome => {
    const resource = resourceUrl(settings, externalBaseUrl, options.mcpPath);
    const message =
      status === 403
        ? `Forbidden: ${challenge.description}`
        : `Unauthorized: ${challenge.description ?? 'a bearer token is required'}`;
    return {
      refusal: {
        status,
        error: {
          code: RPC.invalidRequest,
          message,
          data: { error: challenge.error ?? 'invalid_request', error_description: challenge.description },
        },
        headers: { 'www-authenticate': challengeHeader(resource, settings.scopesSupported, challenge) },
        presented,
      },
    };
  };

  const authenticate = async (
    authorization: string | undefined,
    externalBaseUrl: string,
  ): Promise<AuthOutcome> => {
    const token = bearerToken(authorization);
    if (token.kind === 'missing') return refuse(externalBaseUrl, 401, {}, 'none');
    if (token.kind === 'malformed') {
      const challenge: Challenge = { error: 'invalid_request', description: token.reason };
      return refuse(externalBaseUrl, 401, challenge, `authorization header: ${token.reason}`);
    }
    try {
      const claims = await validator.validate(token.value);
      return { identity: identityFor(claims, token.value) };
    } catch (err) {
      if (err instanceof TokenRejectedError) {
        log().debug({ reason: err.message }, 'bearer token refused');
        const presented = `bearer token: ${err.message}`;
        if (err.kind === 'insufficient_scope') {
          const challenge: Challenge = { error: 'insufficient_scope', description: err.message };
          return refuse(externalBaseUrl, 403, challenge, presented);
        }
        return refuse(externalBaseUrl, 401, { error: 'invalid_token', description: err.message }, presented);
      }
      if (err instanceof IdpUnavailableError) {
        log().error({ reason: err.message }, 'cannot validate bearer tokens: identity provider unavailable');
        return {
          refusal: {
            status: 503,
            error: {
              code: RPC.serverError,
              message: 'Authentication is temporarily unavailable: the identity provider cannot be reached',
            },
            headers: {},
            presented: 'bearer token: not checked (the identity provider cannot be reached)',
          },
        };
      }
      throw err;
    }
  };

  const rememberedIdentity = (authorization: string | undefined): Identity | undefined => {
    // Only the canonical form: a remembered token passed bearerToken(), so `Bearer <it>` would too.
    if (authorization === undefined || !authorization.startsWith(BEARER_PREFIX)) return undefined;
    const claims = validator.remembered(authorization.slice(BEARER_PREFIX.length));
    return claims && identities.get(claims);
  };

  return {
    authenticate,
    rememberedIdentity,
    route: {
      prefix: PRM_PATH,
      handle(req, res, externalBaseUrl) {
        serveMetadata(req, res, settings, resourceUrl(settings, externalBaseUrl, options.mcpPath));
      },
    },
    close: () => http.close(),
  };
}

const BEARER_PREFIX = 'Bearer ';

type BearerToken =
  { kind: 'missing' } | { kind: 'malformed'; reason: string } | { kind: 'present'; value: string };

/** RFC 6750 §2.1: `Bearer <b64token>`, scheme case-insensitive, exactly one token. */
export function bearerToken(header: string | undefined): BearerToken {
  if (header === undefined || header.trim() === '') return { kind: 'missing' };
  const match = /^Bearer +([^ ]*) *$/i.exec(header);
  if (!match) {
    return /^bearer\b/i.test(header)
      ? { kind: 'malformed', reason: 'the Authorization header must be "Bearer <token>"' }
      : { kind: 'malformed', reason: 'only Bearer tokens are accepted' };
  }
  const value = match[1] as string;
  if (value === '') return { kind: 'malformed', reason: 'the bearer token is empty' };
  if (value.length > MAX_TOKEN_LENGTH) return { kind: 'malformed', reason: 'the bearer token is too large' };
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(value)) {
    return { kind: 'malformed', reason: 'the bearer token contains characters RFC 6750 does not allow' };
  }
  return { kind: 'present', value };
}
