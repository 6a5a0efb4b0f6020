/** Builds the caller's Identity from validated token claims. */
import { TokenRejectedError } from './token-validator.js';
import type { Identity } from '../../mcp/identity.js';

export interface GroupClaimNames {
  /** Claim holding group membership; takes priority over the well-known names. Dot paths allowed. */
  groupClaimName?: string;
  /** Claim holding roles; its values are added to the groups. */
  roleClaimName?: string;
}

const WELL_KNOWN_GROUP_CLAIMS = ['groups', 'roles', 'cognito:groups'];

/** Claims that identify the token rather than the caller, dropped from the identity. */
const TOKEN_INTERNAL_CLAIMS = new Set(['jti', 'active', 'token_type', 'tsid']);

/** Refuses (TokenRejectedError) claims that do not name a subject. */
export function identityFromClaims(claims: Record<string, unknown>, names: GroupClaimNames = {}): Identity {
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject === '') {
    throw new TokenRejectedError('invalid_token', "the token has no 'sub' claim");
  }
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(claims)) if (!TOKEN_INTERNAL_CLAIMS.has(key)) kept[key] = value;
  return {
    subject,
    name: stringClaim(claims.name) ?? stringClaim(claims.preferred_username),
    email: stringClaim(claims.email),
    groups: extractGroups(claims, names),
    claims: kept,
    local: false,
  };
}

export function extractGroups(claims: Record<string, unknown>, names: GroupClaimNames = {}): string[] {
  const groups: string[] = [];
  if (names.groupClaimName) {
    groups.push(...stringList(claimAt(claims, names.groupClaimName)));
  } else {
    const present = WELL_KNOWN_GROUP_CLAIMS.find((name) => claims[name] !== undefined);
    if (present) groups.push(...stringList(claims[present]));
  }
  if (names.roleClaimName) groups.push(...stringList(claimAt(claims, names.roleClaimName)));
  return [...new Set(groups)];
}

/** A claim by exact name (namespaced claims contain dots), else by dot path (`realm_access.roles`). */
function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v !== '');
  return [];
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
