/**
 * A minimal, fast streamable-HTTP MCP backend for the benchmark: stateless JSON answers to
 * initialize, ping and tools/call (echo), 202 for notifications. Prints {"url"} when listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer } from './echo-server.js';

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const reply = answer(Buffer.concat(chunks).toString('utf8'));
    if (reply === undefined) {
      res.writeHead(202).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(reply.body),
      ...(reply.sessionId ? { 'mcp-session-id': reply.sessionId } : {}),
    });
    res.end(reply.body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
