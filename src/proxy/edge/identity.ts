/** The synthetic caller used when no authentication is configured. */
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
