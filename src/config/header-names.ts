/**
 * Which header names a user may have the proxy add to upstream requests. Here in config so the
 * proxy (at start) and the operator (before it builds a pod) apply the same rule.
 */

/** Hop-by-hop, framing and forwarding headers a user may not inject (they would break or spoof the request). */
export const RESTRICTED_HEADERS: ReadonlySet<string> = new Set(
  [
    'Host',
    'Connection',
    'Keep-Alive',
    'Te',
    'Trailer',
    'Upgrade',
    'Http2-Settings',
    'Proxy-Authorization',
    'Proxy-Authenticate',
    'Proxy-Connection',
    'Transfer-Encoding',
    'Content-Length',
    'Forwarded',
    'X-Forwarded-For',
    'X-Forwarded-Host',
    'X-Forwarded-Proto',
    'X-Real-Ip',
  ].map((h) => h.toLowerCase()),
);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Why `name` cannot be a forwarded header (without the field name), or undefined when it can. */
export function forwardHeaderNameProblem(name: string): string | undefined {
  if (!TOKEN.test(name)) return `${JSON.stringify(name)} is not a valid HTTP header name`;
  if (RESTRICTED_HEADERS.has(name.toLowerCase())) {
    return `the ${name} header cannot be set (hop-by-hop, framing or forwarding header)`;
  }
  return undefined;
}
