/**
 * The stdio reference: the least a Node.js HTTP-to-stdio proxy can do while sharing one stdio
 * server between clients (node:http server; per POST: read the body, swap the JSON-RPC id for a
 * unique one, write the line to the server's stdin, restore the id on the answer line, send it
 * with Content-Length). No sessions beyond a minted id, no checks, no policies. What this reaches
 * is the floor for the stdio cells on this machine, as bench/pipe-proxy.ts is for HTTP.
 * argv[2] is the stdio server command as JSON; prints {"url"} when listening.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';

const [file, ...args] = JSON.parse(process.argv[2] ?? '[]') as string[];
const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = new Map<number, { res: ServerResponse; id: unknown }>();
let nextId = 1;

createInterface({ input: child.stdout }).on('line', (line) => {
  const message = JSON.parse(line) as { id?: number };
  const pending = message.id === undefined ? undefined : waiting.get(message.id);
  if (!pending) return;
  waiting.delete(message.id!);
  const body = JSON.stringify({ ...message, id: pending.id });
  pending.res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  pending.res.end(body);
});

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method?: string };
    if (message.id === undefined) {
      child.stdin.write(`${JSON.stringify(message)}\n`);
      res.writeHead(202).end();
      return;
    }
    if (message.method === 'initialize') res.setHeader('mcp-session-id', randomUUID());
    const upstreamId = nextId++;
    waiting.set(upstreamId, { res, id: message.id });
    child.stdin.write(`${JSON.stringify({ ...message, id: upstreamId })}\n`);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on('SIGTERM', () => {
  child.kill('SIGTERM');
  server.close(() => process.exit(0));
});
