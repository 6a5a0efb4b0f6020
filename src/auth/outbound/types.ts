/** What outbound authentication gives the proxy's HTTP forwarder: credentials per upstream request. */
import type { Identity } from '../../mcp/identity.js';

/** Credentials for requests to a remote/HTTP backend (bearer, OAuth, token exchange, headers). */
export interface UpstreamAuth {
  /** Headers to set on an upstream request made on behalf of this caller. */
  headers(identity: Identity): Promise<Record<string, string>>;
  /**
   * Called on an upstream 401, or a 403 with an `insufficient_scope` challenge (scope step-up);
   * resolves true when new credentials were obtained and the request may be retried once.
   */
  onUnauthorized?(wwwAuthenticate: string | undefined): Promise<boolean>;
}
