/**
 * Format rules for the values of `moat run` flags (KEY=VALUE, host:container[:ro], ports,
 * headers, origins, URLs). Each parser throws a usage error that names the flag, the bad value
 * and the allowed format.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { SECRET_REF } from '../config/defaults.js';
import { usageError } from '../util/errors.js';
import { RESTRICTED_HEADERS } from '../config/header-names.js';

function bad(flag: string, value: string, allowed: string): never {
  throw usageError(`--${flag}: invalid value ${JSON.stringify(value)}: ${allowed}`);
}

/** Splits `key=value` on the first `=`; the key must be non-empty. */
export function splitKeyValue(flag: string, text: string, format = 'KEY=VALUE'): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) bad(flag, text, `expected ${format}`);
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** Repeated `key=value` values into a map (later keys win); `keyRule` checks each key. */
export function keyValueMap(
  flag: string,
  values: readonly string[],
  format = 'KEY=VALUE',
  keyRule?: { pattern: RegExp; text: string },
): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  const map: Record<string, string> = {};
  for (const text of values) {
    const [key, value] = splitKeyValue(flag, text, format);
    if (keyRule && !keyRule.pattern.test(key)) bad(flag, text, keyRule.text);
    if (/[\0\r\n]/.test(key + value)) bad(flag, text, 'control characters are not allowed');
    map[key] = value;
  }
  return map;
}

export const ENV_KEY = { pattern: /^[^\s=]+$/, text: 'the KEY must not contain spaces' };
/** A `NAME,target=TARGET` secret reference (never a value). */
export function parseSecretRef(value: string): string {
  if (!SECRET_REF.test(value)) bad('secret', value, 'expected NAME,target=TARGET');
  return value;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Repeated `Name=Value` headers (value may contain commas and `=`); restricted names rejected. */
export function headerMap(
  flag: string,
  values: readonly string[],
  format: string,
): Record<string, string> | undefined {
  const map = keyValueMap(flag, values, format, {
    pattern: HEADER_NAME,
    text: "the header name must be an HTTP token (letters, digits and !#$%&'*+.^_`|~-)",
  });
  for (const name of Object.keys(map ?? {})) {
    if (RESTRICTED_HEADERS.has(name.toLowerCase())) {
      throw usageError(
        `--${flag}: header ${name} cannot be set: the proxy manages it (restricted: Host, Connection, ` +
          'Content-Length, Transfer-Encoding, Forwarded, X-Forwarded-*, Proxy-*, ...)',
      );
    }
  }
  return map;
}

/** An exact origin: scheme://host[:port], no path. */
export function parseOrigin(value: string): string {
  let origin: string | undefined;
  try {
    origin = new URL(value).origin;
  } catch {
    origin = undefined;
  }
  if (origin === undefined || origin === 'null' || origin !== value) {
    bad(
      'allowed-origins',
      value,
      'expected an origin such as https://app.example.com (scheme, host, optional port)',
    );
  }
  return value;
}

/** An absolute http(s) URL. */
export function parseHttpUrl(flag: string, value: string): URL {
  try {
    const url = new URL(value);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '') return url;
  } catch {
    // fall through to the error
  }
  return bad(flag, value, 'expected an http:// or https:// URL');
}

/** An RFC 8707 resource indicator: an absolute URI without a fragment. */
export function parseResourceIndicator(flag: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || value.includes('#'))
    bad(flag, value, 'expected an absolute URI without a fragment (RFC 8707)');
  return value;
}

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** An IPv4 literal or a hostname; IPv6 is not supported by the proxy listener. */
export function parseHost(flag: string, value: string): string {
  if (isIPv6(value.replace(/^\[|\]$/g, ''))) {
    throw usageError(
      `--${flag}: IPv6 addresses are not supported: ${value}; use an IPv4 address or a hostname`,
    );
  }
  if (!isIPv4(value) && !HOSTNAME.test(value)) bad(flag, value, 'expected an IPv4 address or a hostname');
  return value;
}

/** `key=value,key=value` into a map. */
export function attributeMap(flag: string, value: string): Record<string, string> {
  const items = value.split(',').map((s) => s.trim());
  return keyValueMap(flag, items, 'key=value,key=value') ?? {};
}
