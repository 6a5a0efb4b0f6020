/**
 * The base URL clients reach the proxy at. X-Forwarded-Proto/Host/Port/Prefix are honored only
 * when the operator says a trusted reverse proxy sets them; otherwise they are client-controlled.
 */
import type { IncomingMessage } from 'node:http';

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const PREFIX = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/;

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  // The usual single value is taken as it is (no split per request).
  const comma = v.indexOf(',');
  return (comma === -1 ? v : v.slice(0, comma)).trim() || undefined;
}

/** The request's Host when it is a valid host[:port], else the proxy's own address. */
function hostOf(requestHost: string | undefined, fallbackHost: string): string {
  return requestHost && HOST.test(requestHost) ? requestHost : fallbackHost;
}

/** The last base URL built from a Host header alone (clients of one proxy send the same Host). */
let last: { requestHost: string | undefined; fallbackHost: string; base: string } | undefined;

function untrustedBase(requestHost: string | undefined, fallbackHost: string): string {
  if (last && last.requestHost === requestHost && last.fallbackHost === fallbackHost) return last.base;
  const base = `http://${hostOf(requestHost, fallbackHost)}`;
  last = { requestHost, fallbackHost, base };
  return base;
}

export function externalBaseUrl(
  req: IncomingMessage,
  trustProxyHeaders: boolean,
  fallbackHost: string,
): string {
  const requestHost = first(req.headers.host);
  if (!trustProxyHeaders) return untrustedBase(requestHost, fallbackHost);
  let host = hostOf(requestHost, fallbackHost);
  let proto = 'http';
  let prefix = '';
  const fProto = first(req.headers['x-forwarded-proto'])?.toLowerCase();
  if (fProto === 'http' || fProto === 'https') proto = fProto;
  const fHost = first(req.headers['x-forwarded-host']);
  if (fHost && HOST.test(fHost)) host = fHost;
  const fPort = first(req.headers['x-forwarded-port']);
  if (fPort && /^\d{1,5}$/.test(fPort)) host = `${host.replace(/:\d+$/, '')}:${fPort}`;
  const fPrefix = first(req.headers['x-forwarded-prefix']);
  if (fPrefix && PREFIX.test(fPrefix)) prefix = fPrefix.replace(/\/+$/, '');
  return `${proto}://${host}${prefix}`;
}
