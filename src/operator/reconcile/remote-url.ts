/**
 * The SSRF guard on `spec.remoteUrl`: a proxy pod runs inside the cluster, so a URL chosen by
 * whoever may create an MCPRemoteProxy must not make it call the node, the cloud's metadata
 * service or the Kubernetes API with the pod's network position.
 *
 * Pure string and address logic, no DNS: the host is judged as WHATWG URL parsing normalizes it
 * (IPv4 in decimal, octal, hex or short form becomes dotted-quad; IPv6 is compressed; IDNA and
 * percent-encoding are resolved), so every spelling of one address gets one verdict.
 *
 * - Always blocked: loopback, unspecified, link-local, multicast/broadcast/reserved, cloud
 *   metadata endpoints and the Kubernetes API service (`kubernetes.default` in any form).
 * - Blocked unless `allowPrivateEndpoint`: RFC 1918, CGNAT (100.64/10), IPv6 unique-local
 *   (fc00::/7) and `*.cluster.local` names.
 * - Never blocked by name: other hostnames, including bare `<svc>.<ns>.svc` names.
 */

export interface RemoteUrlRules {
  allowPrivateEndpoint: boolean;
}

type Verdict = 'blocked' | 'private' | 'public';

interface Judgement {
  verdict: Verdict;
  /** What the host is, for the message ("loopback address", "cloud metadata endpoint", …). */
  what: string;
}

const FIELD = 'spec.remoteUrl';

/** Undefined when the URL may be used; else a message naming the field and the problem. */
export function checkRemoteUrl(raw: string, rules: RemoteUrlRules): string | undefined {
  if (raw.trim() === '') return `${FIELD} must not be empty`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${FIELD} ${JSON.stringify(raw)} is not a valid URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `${FIELD} must use http or https, not ${JSON.stringify(url.protocol.slice(0, -1))}`;
  }
  if (url.username !== '' || url.password !== '') {
    return `${FIELD} must not carry credentials (user:password@); use spec.headerForward.addHeadersFromSecret or an external auth config`;
  }
  const host = url.hostname;
  if (host === '') return `${FIELD} must name a host`;
  const judgement = judgeHost(host);
  if (judgement.verdict === 'blocked') {
    return `${FIELD} host ${host} is a ${judgement.what}, which is always blocked`;
  }
  if (judgement.verdict === 'private' && !rules.allowPrivateEndpoint) {
    return `${FIELD} host ${host} is a ${judgement.what}; set spec.allowPrivateEndpoint: true to allow it`;
  }
  return undefined;
}

function judgeHost(host: string): Judgement {
  if (host.startsWith('[')) return judgeIpv6(parseIpv6(host.slice(1, -1)));
  const ipv4 = parseIpv4(host);
  if (ipv4 !== undefined) return judgeIpv4(ipv4);
  return judgeHostname(host);
}

// ---------------------------------------------------------------------------------------------
// Hostnames

/** Names of cloud metadata services (each also resolves to a blocked address inside its cloud). */
const METADATA_HOSTNAMES = [
  'metadata.google.internal',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
];

function judgeHostname(host: string): Judgement {
  const name = host.toLowerCase().replace(/\.+$/, '');
  const labels = name.split('.');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    return { verdict: 'blocked', what: 'loopback name' };
  }
  if (METADATA_HOSTNAMES.includes(name)) return { verdict: 'blocked', what: 'cloud metadata endpoint' };
  if (isKubernetesApiName(labels)) return { verdict: 'blocked', what: 'name of the Kubernetes API service' };
  if (name.endsWith('.cluster.local'))
    return { verdict: 'private', what: 'in-cluster name (*.cluster.local)' };
  return { verdict: 'public', what: 'hostname' };
}

/**
 * `kubernetes.default`, `kubernetes.default.svc`, `kubernetes.default.svc.<any cluster domain>`,
 * and bare `kubernetes` (which the search path resolves to the API in the `default` namespace).
 */
function isKubernetesApiName(labels: string[]): boolean {
  if (labels[0] !== 'kubernetes') return false;
  if (labels.length === 1) return true;
  if (labels[1] !== 'default') return false;
  return labels.length === 2 || labels[2] === 'svc';
}

// ---------------------------------------------------------------------------------------------
// IPv4 (WHATWG URL has already normalized every encoding to dotted-quad)

function parseIpv4(host: string): number | undefined {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const octets = parts.map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

interface Ipv4Range {
  base: number;
  bits: number;
  verdict: Verdict;
  what: string;
}

function v4(cidr: string, verdict: Verdict, what: string): Ipv4Range {
  const [base, bits] = cidr.split('/');
  return { base: parseIpv4(base ?? '') ?? 0, bits: Number(bits), verdict, what };
}

/** Checked in order: the specific metadata addresses before the private ranges that contain them. */
const IPV4_RANGES: Ipv4Range[] = [
  v4('169.254.169.254/32', 'blocked', 'cloud metadata endpoint'),
  v4('100.100.100.200/32', 'blocked', 'cloud metadata endpoint'),
  v4('0.0.0.0/8', 'blocked', 'unspecified ("this network") address'),
  v4('127.0.0.0/8', 'blocked', 'loopback address'),
  v4('169.254.0.0/16', 'blocked', 'link-local address'),
  v4('224.0.0.0/4', 'blocked', 'multicast address'),
  v4('240.0.0.0/4', 'blocked', 'reserved or broadcast address'),
  v4('10.0.0.0/8', 'private', 'private address (RFC 1918)'),
  v4('172.16.0.0/12', 'private', 'private address (RFC 1918)'),
  v4('192.168.0.0/16', 'private', 'private address (RFC 1918)'),
  v4('100.64.0.0/10', 'private', 'shared address space address (100.64.0.0/10)'),
];

function inV4Range(address: number, range: Ipv4Range): boolean {
  const size = 2 ** (32 - range.bits);
  return Math.floor(address / size) === Math.floor(range.base / size);
}

function judgeIpv4(address: number): Judgement {
  const range = IPV4_RANGES.find((r) => inV4Range(address, r));
  return range ? { verdict: range.verdict, what: range.what } : { verdict: 'public', what: 'address' };
}

// ---------------------------------------------------------------------------------------------
// IPv6 (WHATWG URL gives the compressed lower-case form, without a zone)

/** Eight 16-bit groups. */
type Ipv6 = number[];

function parseIpv6(text: string): Ipv6 {
  const [head = '', tail] = text.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  if (tail === undefined) return left;
  const right = groups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function startsWith(address: Ipv6, prefix: number[]): boolean {
  return prefix.every((g, i) => address[i] === g);
}

/** The IPv4 address carried in the low 32 bits. */
function embeddedIpv4(address: Ipv6): number {
  return (address[6] ?? 0) * 65536 + (address[7] ?? 0);
}

function judgeIpv6(address: Ipv6): Judgement {
  const first = address[0] ?? 0;
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), 64:ff9b::a.b.c.d (NAT64) reach IPv4.
  if (
    startsWith(address, [0, 0, 0, 0, 0, 0xffff]) ||
    startsWith(address, [0, 0, 0, 0, 0xffff, 0]) ||
    startsWith(address, [0x64, 0xff9b, 0, 0, 0, 0])
  ) {
    return judgeIpv4(embeddedIpv4(address));
  }
  if (startsWith(address, [0, 0, 0, 0, 0, 0])) {
    const low = embeddedIpv4(address);
    if (low === 0) return { verdict: 'blocked', what: 'unspecified address (::)' };
    if (low === 1) return { verdict: 'blocked', what: 'loopback address (::1)' };
    // ::a.b.c.d, the deprecated IPv4-compatible form.
    return judgeIpv4(low);
  }
  if (address.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) {
    return { verdict: 'blocked', what: 'cloud metadata endpoint' };
  }
  if (first >= 0xfe80 && first <= 0xfebf)
    return { verdict: 'blocked', what: 'link-local address (fe80::/10)' };
  if (first >= 0xff00) return { verdict: 'blocked', what: 'multicast address (ff00::/8)' };
  if (first >= 0xfc00 && first <= 0xfdff) {
    return { verdict: 'private', what: 'unique-local address (fc00::/7)' };
  }
  if (first >= 0xfec0 && first <= 0xfeff)
    return { verdict: 'private', what: 'site-local address (fec0::/10)' };
  return { verdict: 'public', what: 'address' };
}
