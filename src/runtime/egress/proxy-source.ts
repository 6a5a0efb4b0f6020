/**
 * The programs of a workload's network sandbox, one source for two roles (see `sandbox.ts`):
 *
 * - `egress` runs in `<workload>-egress` on the default bridge. It is the forward proxy that
 *   enforces the permission profile's outbound rules and refuses the engine's gateway
 *   addresses. It listens only on a Unix socket in the sandbox volume, so no other container
 *   can use it as an open proxy. For HTTP servers it also listens on the published ingress port
 *   and hands each connection to the relay through a second socket.
 * - `relay` owns the workload's network namespace (loopback only; the workload joins it). It
 *   turns 127.0.0.1:<proxy port> into the egress socket and the ingress socket into
 *   127.0.0.1:<target port>.
 *
 * Kept as plain JavaScript source (Node built-ins only) because it is copied into an image built
 * from the host's Node binary; tests run this same text as a host process.
 *
 * Config: env MOAT_EGRESS_CONFIG (JSON, see EgressConfig/RelayConfig). A host entry matches
 * exactly (case-insensitive); a leading "." matches the domain and its subdomains. An empty list
 * allows any value; both lists must match (AND), as in ToolHive.
 */
export const EGRESS_PROXY_PORT = 3128;

/** How the egress proxy treats the engine's gateway addresses. */
export type GatewayRule =
  /** Refused on every port, even under insecure_allow_all (isolation, the default). */
  | 'block'
  /** Allowed on every port, whatever the profile says (--allow-docker-gateway). */
  | 'allow'
  /** Like any other address: the profile decides (--isolate-network=false). */
  | 'profile';

/** The hostnames engines give containers for the host. */
export const HOST_GATEWAY_NAMES = [
  'host.docker.internal',
  'host.containers.internal',
  'gateway.docker.internal',
];

export interface EgressConfig {
  role: 'egress';
  /** A Unix socket path, or a TCP port on 127.0.0.1 (tests on the host). */
  listen: string | number;
  /** `allowAll`: insecure_allow_all; otherwise the lists (both empty: nothing is allowed). */
  allowAll: boolean;
  allowHosts: string[];
  allowPorts: number[];
  gateway: GatewayRule;
  /** Gateway addresses snapshotted when the workload was created. */
  gatewayAddresses: string[];
  /** HTTP servers: TCP port published to the host, and the relay's socket behind it. */
  ingress?: { port: number; socket: string };
}

export interface RelayConfig {
  role: 'relay';
  proxyPort: number;
  egressSocket: string;
  ingress?: { socket: string; targetPort: number };
}

export const EGRESS_PROXY_JS = String.raw`
import { createServer, request } from 'node:http';
import { connect, createServer as createTcpServer, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { rmSync } from 'node:fs';

const config = JSON.parse(process.env.MOAT_EGRESS_CONFIG || '{}');

function out(record) {
  process.stdout.write(JSON.stringify(record) + '\n');
}

/** Listens on a Unix socket (a stale one from the last run is removed first) or a loopback port. */
function listenOn(server, where, what) {
  if (typeof where === 'string') rmSync(where, { force: true });
  const args = typeof where === 'string' ? [where] : [where, '127.0.0.1'];
  server.listen(...args, () => out({ egress: 'listening', on: where, what }));
}

/** Two sockets joined both ways; either side closing or failing closes the other. */
function join(a, b) {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

/** relay: the workload's loopback to the sandbox sockets. */
function relay() {
  listenOn(createTcpServer((client) => join(client, connect(config.egressSocket))), config.proxyPort, 'proxy');
  if (config.ingress)
    listenOn(
      createTcpServer((client) => join(client, connect(config.ingress.targetPort, '127.0.0.1'))),
      config.ingress.socket,
      'ingress',
    );
}

// ------------------------------------------------------------------------------------------------
// egress

const HOST_GATEWAY_NAMES = ${JSON.stringify(HOST_GATEWAY_NAMES)};
const hosts = (config.allowHosts || []).map((h) => h.toLowerCase());
const ports = config.allowPorts || [];
const gatewayNames = new Set(HOST_GATEWAY_NAMES);
const gatewayAddresses = new Set();

/** One spelling per address: IPv4-mapped IPv6 as IPv4, IPv6 lower-case and compressed by URL. */
function canonical(address) {
  let a = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (isIP(a) === 6) {
    a = new URL('http://[' + a + ']/').hostname.replace(/^\[|\]$/g, '');
    const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
    if (hex) {
      const n = (parseInt(hex[1], 16) << 16) | parseInt(hex[2], 16);
      return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
    }
  }
  return a;
}

/** Addresses that are the host or this proxy: never a destination while gateways are blocked. */
function isLocal(address) {
  return /^(127\.|0\.)/.test(address) || address === '::1' || address === '::';
}

function profileAllows(name, port) {
  if (config.allowAll) return true;
  if (hosts.length === 0 && ports.length === 0) return false;
  const hostOk =
    hosts.length === 0 ||
    hosts.some((h) => (h.startsWith('.') ? name === h.slice(1) || name.endsWith(h) : name === h));
  return hostOk && (ports.length === 0 || ports.includes(port));
}

/**
 * Decides on a destination. The name is resolved here and the connection goes to the checked
 * address, so a DNS name or an odd IP spelling (decimal, hex, IPv4-mapped IPv6) that lands on
 * a gateway is caught, and the answer cannot change between check and connect.
 */
async function decide(host, port) {
  // The URL parser spells every IPv4 form (decimal, hex, octal, short) as a dotted quad.
  let name;
  try {
    name = new URL('http://' + (isIP(host) === 6 ? '[' + host + ']' : host) + '/').hostname;
  } catch {
    return { deny: 'not a valid host name' };
  }
  name = name.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const rule = config.gateway;
  if (rule !== 'allow' && !profileAllows(name, port)) return { deny: 'not allowed by the permission profile' };
  let addresses = [];
  const namedGateway = gatewayNames.has(name);
  if (!namedGateway) {
    try {
      addresses = (await lookup(name, { all: true, verbatim: true })).map((a) => canonical(a.address));
    } catch (err) {
      return { fail: 'cannot resolve ' + name + ' (' + (err.code || err.message) + ')' };
    }
  }
  const gateway = namedGateway || addresses.some((a) => gatewayAddresses.has(a));
  if (rule === 'block' && (gateway || addresses.some(isLocal)))
    return { deny: 'a gateway address of the container engine (the host); --allow-docker-gateway allows it' };
  if (!gateway && rule === 'allow' && !profileAllows(name, port))
    return { deny: 'not allowed by the permission profile' };
  // A host-gateway name is connected by name: the container's /etc/hosts knows it.
  if (namedGateway) return { address: name };
  return { address: addresses[0] };
}

function log(decision, method, host, port, reason) {
  out({ egress: decision, method, host, port, ...(reason ? { reason } : {}) });
}

function refusal(host, port, reason) {
  return 'moat egress: ' + host + ':' + port + ' is refused: ' + reason + '\n';
}

function splitHostPort(value, defaultPort) {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value || '');
  if (!m) return undefined;
  return { host: m[1], port: m[2] ? Number(m[2]) : defaultPort };
}

async function forward(req, res) {
  let url;
  try {
    url = new URL(req.url);
  } catch {
    res.writeHead(400).end('moat egress: absolute URL required\n');
    return;
  }
  if (url.protocol !== 'http:') {
    res.writeHead(400).end('moat egress: only http:// URLs are proxied; use CONNECT for https\n');
    return;
  }
  const port = url.port ? Number(url.port) : 80;
  const verdict = await decide(url.hostname, port);
  if (!verdict.address) {
    log(verdict.deny ? 'deny' : 'fail', req.method, url.hostname, port, verdict.deny || verdict.fail);
    res.writeHead(verdict.deny ? 403 : 502, { 'content-type': 'text/plain' });
    res.end(refusal(url.hostname, port, verdict.deny || verdict.fail));
    return;
  }
  log('allow', req.method, url.hostname, port);
  const headers = { ...req.headers };
  delete headers['proxy-connection'];
  delete headers['proxy-authorization'];
  const upstream = request(
    { host: verdict.address, port, method: req.method, path: url.pathname + url.search, headers },
    (up) => {
      res.writeHead(up.statusCode || 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502).end('moat egress: ' + err.code + '\n');
    else res.destroy();
  });
  req.pipe(upstream);
}

async function tunnel(req, client, head) {
  let upstream;
  client.on('error', () => upstream && upstream.destroy());
  const target = splitHostPort(req.url, 443);
  const verdict = target ? await decide(target.host, target.port) : { deny: 'not host:port' };
  if (!verdict.address) {
    log(verdict.deny ? 'deny' : 'fail', 'CONNECT', target ? target.host : req.url, target ? target.port : 0, verdict.deny || verdict.fail);
    const status = verdict.deny ? '403 Forbidden' : '502 Bad Gateway';
    client.end(
      'HTTP/1.1 ' + status + '\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n' +
        refusal(target ? target.host : req.url, target ? target.port : 0, verdict.deny || verdict.fail),
    );
    return;
  }
  log('allow', 'CONNECT', target.host, target.port);
  let established = false;
  upstream = connect(target.port, verdict.address, () => {
    established = true;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', (err) => {
    if (established) client.destroy();
    else client.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\nmoat egress: ' + err.code + '\n');
  });
}

/** The gateway snapshot: the engine's bridge gateways plus what the host-gateway names resolve to. */
async function snapshotGateways() {
  for (const a of config.gatewayAddresses || []) gatewayAddresses.add(canonical(a));
  for (const name of HOST_GATEWAY_NAMES) {
    const found = await lookup(name, { all: true }).catch(() => []);
    for (const a of found) gatewayAddresses.add(canonical(a.address));
  }
}

async function egress() {
  if (config.gateway !== 'profile') await snapshotGateways();
  const server = createServer((req, res) => void forward(req, res));
  server.on('connect', (req, client, head) => void tunnel(req, client, head));
  server.on('clientError', (err, socket) => socket.destroy());
  listenOn(server, config.listen, 'proxy');
  out({ egress: 'rules', allowAll: !!config.allowAll, hosts, ports, gateway: config.gateway, gateways: [...gatewayAddresses] });
  if (config.ingress) {
    const ingress = createTcpServer((client) => join(client, connect(config.ingress.socket)));
    ingress.listen(config.ingress.port, '0.0.0.0', () => out({ egress: 'listening', on: config.ingress.port, what: 'ingress' }));
  }
}

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
if (config.role === 'relay') relay();
else await egress();
`;
