/** Small address facts shared by the CLI, the proxy and outbound auth. */
import { isIP } from 'node:net';

/** True for localhost, 127.0.0.0/8 (also IPv4-mapped, e.g. ::ffff:127.0.0.1) and ::1, bracketed or not. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/^::ffff:(?=\d+\.)/, '');
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

const MAPPED_PREFIXES = [
  /^::ffff:(?:0:)?/i, // IPv4-mapped (and the SIIT-translated ::ffff:0:a.b.c.d)
  /^64:ff9b::/i, // NAT64 well-known prefix
  /^::(?=[0-9a-f]{1,4}:[0-9a-f]{1,4}$|\d+\.)/i, // deprecated IPv4-compatible
];

/**
 * The IPv4 address an IPv6 address embeds (mapped, NAT64, compatible), dotted, in either
 * spelling: `::ffff:169.254.169.254` and the `::ffff:a9fe:a9fe` that URL parsing produces.
 */
export function embeddedIpv4(host: string): string | undefined {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 6) return undefined;
  for (const prefix of MAPPED_PREFIXES) {
    const match = prefix.exec(bare);
    if (!match) continue;
    const tail = bare.slice(match[0].length);
    if (isIP(tail) === 4) return tail;
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(tail);
    if (!hex) continue;
    const [high, low] = [parseInt(hex[1] as string, 16), parseInt(hex[2] as string, 16)];
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

/** Link-local: 169.254.0.0/16 and fe80::/10, also when embedded in an IPv6 address. */
export function isLinkLocalHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  const v4 = embeddedIpv4(bare) ?? (isIP(bare) === 4 ? bare : undefined);
  if (v4 !== undefined) return v4.startsWith('169.254.');
  return isIP(bare) === 6 && /^fe[89ab][0-9a-f]:/.test(bare);
}

/** Cloud instance-metadata services by name (AWS, GCP, Azure, Alibaba, Oracle, OpenStack...). */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);
/** Metadata addresses outside link-local: AWS IPv6, Alibaba Cloud, Oracle Cloud. */
const METADATA_ADDRESSES = new Set(['fd00:ec2::254', '100.100.100.200', '192.0.0.192']);

/**
 * True for a cloud instance-metadata endpoint: never a legitimate MCP server, and the classic SSRF
 * target. `host` is as a parsed URL gives it (URL parsing already turned decimal, hex and octal
 * IPv4 spellings into dotted form).
 */
export function isMetadataHost(host: string): boolean {
  const bare = host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (METADATA_NAMES.has(bare) || isLinkLocalHost(bare)) return true;
  const v4 = embeddedIpv4(bare);
  return METADATA_ADDRESSES.has(v4 ?? bare);
}
