/**
 * DNS-rebinding protection: the browser `Origin` header must be on an exact allowlist. Requests
 * without an Origin (non-browser clients) pass. A loopback bind without a configured list gets
 * the loopback origins of its own port; a non-loopback bind without one has no check.
 */
import { isLoopbackHost } from '../../util/net.js';

/** Lowercased `scheme://host[:port]` (default ports dropped, IPv6 bracketed); undefined if not an origin. */
export function canonicalOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.origin === 'null') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/**
 * The origins to allow: the configured list, the loopback defaults for a loopback bind, or
 * undefined (no check) for a non-loopback bind without a list.
 */
export function originAllowlist(
  configured: readonly string[] | undefined,
  host: string,
  port: number,
): Set<string> | undefined {
  if (configured && configured.length > 0) {
    return new Set(configured.map((o) => canonicalOrigin(o) ?? o));
  }
  if (!isLoopbackHost(host)) return undefined;
  return new Set([`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`]);
}

/** Whether a request's Origin header value passes the allowlist. */
export function originAllowed(allowlist: Set<string> | undefined, origin: string | undefined): boolean {
  if (origin === undefined || allowlist === undefined) return true;
  const canonical = canonicalOrigin(origin);
  return canonical !== undefined && allowlist.has(canonical);
}
