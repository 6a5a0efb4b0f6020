/**
 * Who is calling. Authentication at the edge sets it; a synthetic local user stands in when no
 * authentication is configured.
 */
export interface Identity {
  subject: string;
  name?: string;
  email?: string;
  /** Group and role claims, already extracted per the authz config's claim names. */
  groups: string[];
  claims: Record<string, unknown>;
  /** True for the synthetic identity used when no authentication is configured. */
  local: boolean;
  /**
   * Set when authentication is on and the caller proved no one: what it presented (`none`,
   * `bearer token: the token signature is invalid`, ...), never a token's bytes. Such an identity
   * stands for no principal; it exists so a refused request is recorded as nobody's.
   */
  anonymous?: { presented: string };
  /** The validated bearer token; only for token exchange. Never logged, never forwarded upstream. */
  token?: string;
}
