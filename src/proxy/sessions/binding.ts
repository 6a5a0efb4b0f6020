/**
 * Sessions belong to the principal that created them: issuer + subject of the validated token.
 * A session of another principal is answered exactly like an unknown one (404), so a stolen or
 * guessed session id neither works nor confirms that it exists. Without authentication every
 * caller is the same local user, and sessions carry no principal (as before).
 */
import type { Identity } from '../../mcp/identity.js';
import type { SessionRecord } from '../types.js';

/** Principal keys of frozen identities (authentication reuses one per token while it is valid). */
const principals = new WeakMap<Identity, string>();

/** The principal key stored with a session; undefined for the unauthenticated local user. */
export function principalOf(identity: Identity): string | undefined {
  if (identity.local) return undefined;
  let principal = principals.get(identity);
  if (principal === undefined) {
    const issuer = typeof identity.claims.iss === 'string' ? identity.claims.iss : '';
    // JSON keeps the two parts apart whatever characters they contain.
    principal = JSON.stringify([issuer, identity.subject]);
    if (Object.isFrozen(identity)) principals.set(identity, principal);
  }
  return principal;
}

/** The `principal` field for a new session record (absent for the local user). */
export function ownerFields(identity: Identity): Pick<SessionRecord, 'principal'> {
  const principal = principalOf(identity);
  return principal === undefined ? {} : { principal };
}

/** May this caller use this session? Both anonymous, or the very same issuer and subject. */
export function ownedBy(record: SessionRecord, identity: Identity): boolean {
  return record.principal === principalOf(identity);
}
