/**
 * The egress proxy that enforces a permission profile's outbound allowlist. It runs as its own
 * container (`<workload>-egress`) on the default bridge and on the workload's internal network;
 * the MCP server has no other route out and reaches it through HTTP(S)_PROXY.
 *
 * Kept as plain JavaScript source (Node built-ins only) because it is copied into an image built
 * from the host's Node binary; tests run this same text as a host process.
 *
 * Config: env MOAT_EGRESS_CONFIG = {"allowHosts": [...], "allowPorts": [...], "port": 3128}.
 * A host entry matches exactly (case-insensitive); a leading "." matches the domain and its
 * subdomains. An empty list allows any value; both lists must match (AND), as in ToolHive.
 */
export const EGRESS_PROXY_PORT = 3128;

export const EGRESS_PROXY_JS = String.raw`
import { createServer, request } from 'node:http';
import { connect } from 'node:net';

const config = JSON.parse(process.env.MOAT_EGRESS_CONFIG || '{}');
const hosts = (config.allowHosts || []).map((h) => h.toLowerCase());
const ports = config.allowPorts || [];
const listenPort = config.port || 3128;

function allowed(host, port) {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  const hostOk =
    hosts.length === 0 ||
    hosts.some((h) => (h.startsWith('.') ? name === h.slice(1) || name.endsWith(h) : name === h));
  const portOk = ports.length === 0 || ports.includes(port);
  return hostOk && portOk;
}

function log(decision, method, host, port) {
  process.stdout.write(JSON.stringify({ egress: decision, method, host, port }) + '\n');
}

function deny(res, host, port) {
  res.writeHead(403, { 'content-type': 'text/plain' });
  res.end('moat egress: ' + host + ':' + port + ' is not allowed by the permission profile\n');
}

function splitHostPort(value, defaultPort) {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value || '');
  if (!m) return undefined;
  return { host: m[1], port: m[2] ? Number(m[2]) : defaultPort };
}

const server = createServer((req, res) => {
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
  if (!allowed(url.hostname, port)) {
    log('deny', req.method, url.hostname, port);
    return deny(res, url.hostname, port);
  }
  log('allow', req.method, url.hostname, port);
  const headers = { ...req.headers };
  delete headers['proxy-connection'];
  delete headers['proxy-authorization'];
  const upstream = request(
    { host: url.hostname, port, method: req.method, path: url.pathname + url.search, headers },
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
});

server.on('connect', (req, client, head) => {
  let upstream;
  client.on('error', () => upstream && upstream.destroy());
  const target = splitHostPort(req.url, 443);
  if (!target || !allowed(target.host, target.port)) {
    log('deny', 'CONNECT', target ? target.host : req.url, target ? target.port : 0);
    client.end(
      'HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n' +
        'moat egress: ' + req.url + ' is not allowed by the permission profile\n',
    );
    return;
  }
  log('allow', 'CONNECT', target.host, target.port);
  let established = false;
  upstream = connect(target.port, target.host.replace(/^\[|\]$/g, ''), () => {
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
});

server.on('clientError', (err, socket) => socket.destroy());

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
server.listen(listenPort, '0.0.0.0', () => {
  process.stdout.write(JSON.stringify({ egress: 'listening', port: listenPort, hosts, ports }) + '\n');
});
`;
