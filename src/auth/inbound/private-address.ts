/**
 * Which IP addresses count as "private" for the SSRF guard on identity-provider requests:
 * loopback, RFC 1918, link-local (incl. cloud metadata 169.254.169.254), CGNAT, unique-local
 * IPv6, unspecified and multicast. IPv4-mapped IPv6 addresses are judged by their IPv4 part.
 */
import { BlockList, isIP } from 'node:net';
import { embeddedIpv4 } from '../../util/net.js';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** True when the address is not a public unicast address. Throws on a non-IP string. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  // Judged by the IPv4 address inside, in either spelling (`::ffff:a9fe:a9fe` is 169.254.169.254).
  const mapped = embeddedIpv4(bare);
  if (mapped !== undefined) return blocked.check(mapped, 'ipv4');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family === 6) return blocked.check(bare, 'ipv6');
  throw new TypeError(`not an IP address: ${address}`);
}
