/**
 * RFC 9207: the authorization response names the authorization server that sent it (`iss`), so a
 * client that talks to several servers cannot be made to redeem one server's code at another (a
 * mix-up attack). The comparison is a plain string comparison, without URL normalization.
 */
import { runtimeError } from '../../util/errors.js';
import type { AuthorizationServerMetadata } from './discovery.js';

/**
 * Checks the `iss` of the callback against the issuer Moat sent the browser to; throws before any
 * token request when it differs, or when it is missing although the server announced it. When the
 * issuer is not known (endpoints given by hand, or a 2025-03-26 server's default endpoints) there
 * is nothing to compare with: the `iss` is dropped so the OAuth library does not compare it with
 * the stand-in issuer either. Returns the callback URL to redeem.
 */
export function checkResponseIssuer(
  callback: URL,
  metadata: AuthorizationServerMetadata,
  issuerKnown: boolean,
): URL {
  const iss = callback.searchParams.get('iss');
  if (!issuerKnown) {
    const redeemed = new URL(callback);
    redeemed.searchParams.delete('iss');
    return redeemed;
  }
  if (iss === null) {
    if (metadata.authorization_response_iss_parameter_supported === true) {
      throw runtimeError(
        `the authorization server ${metadata.issuer} announces the iss parameter (RFC 9207) but its authorization response has none: refused, no token requested`,
      );
    }
    return callback;
  }
  if (iss !== metadata.issuer) {
    throw runtimeError(
      `the authorization response comes from issuer ${JSON.stringify(iss)}, not from ${JSON.stringify(metadata.issuer)} where the login started (RFC 9207; a possible mix-up attack): refused, no token requested`,
    );
  }
  return callback;
}
