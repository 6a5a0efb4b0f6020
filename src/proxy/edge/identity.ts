/** The synthetic callers: the local user when no authentication is configured, nobody when it refused. */
import { userInfo } from 'node:os';
import type { Identity } from '../../mcp/identity.js';

function osUser(): string {
  try {
    return userInfo().username || 'local';
  } catch {
    return 'local';
  }
}

let cached: Identity | undefined;

export function localIdentity(): Identity {
  if (!cached) {
    const user = osUser();
    cached = Object.freeze({
      subject: user,
      name: `Local user: ${user}`,
      groups: [],
      claims: Object.freeze({ sub: user }),
      local: true,
    });
  }
  return cached;
}

/**
 * The caller authentication has not proven (or refused): no subject, no claims, what it presented.
 * A refused request is recorded as this one, never as the local user or a principal.
 */
export function anonymousIdentity(presented: string): Identity {
  return Object.freeze({
    subject: '',
    groups: Object.freeze([]) as unknown as string[],
    claims: Object.freeze({}),
    local: false,
    anonymous: Object.freeze({ presented }),
  });
}
