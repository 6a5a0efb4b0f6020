/**
 * The lower bound: the least a Node.js HTTP proxy can do. Forwards each request to the backend
 * over a keep-alive pool (node:http) and pipes the answer back; no sessions, no checks, no
 * header filtering. Whatever this reaches is what one Node HTTP hop costs on this machine.
 * argv[2] is the backend URL; prints {"url"} when listening.
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const backend = new URL(process.argv[2] ?? '');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

const server = createServer((req, res) => {
  const upstream = request(
    {
      hostname: backend.hostname,
      port: backend.port,
      path: req.url,
      method: req.method,
      headers: req.headers,
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
