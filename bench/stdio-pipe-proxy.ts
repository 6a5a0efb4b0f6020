/**
 * The stdio reference: the least a Node.js HTTP-to-stdio proxy can do while sharing one stdio
 * server between clients (node:http server; per POST: read the body, swap the JSON-RPC id for a
 * unique one, write the line to the server's stdin, restore the id on the answer line, send it
 * with Content-Length). No sessions beyond a minted id, no checks, no policies. What this reaches
 * is the floor for the stdio cells on this machine, as bench/pipe-proxy.ts is for HTTP.
 *
 * It takes the shortcuts a proxy of this shape can take, so the floor is as low as Node.js gets:
 * the answer lines are split as bytes (no readline, no string joins), an answer that starts with
 * the id the proxy sent is passed through as bytes with only the id spliced (no JSON.stringify),
 * the POST body is written to stdin in the turn it ends, and the answer goes out in one
 * `res.end(buffer)` with Content-Length on a no-delay socket.
 * argv[2] is the stdio server command as JSON; prints {"url"} when listening.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const [file, ...args] = JSON.parse(process.argv[2] ?? '[]') as string[];
const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = new Map<number, { res: ServerResponse; id: string }>();
let nextId = 1;

const PREFIX = Buffer.from('{"jsonrpc":"2.0","id":');

function answer(line: Buffer): void {
  const message = JSON.parse(line.toString('utf8')) as { id?: number };
  const pending = message.id === undefined ? undefined : waiting.get(message.id);
  if (!pending) return;
  waiting.delete(message.id!);
  const sentId = Buffer.from(`${message.id},`);
  const start = PREFIX.length;
  const body =
    line.subarray(0, start).equals(PREFIX) && line.subarray(start, start + sentId.length).equals(sentId)
      ? Buffer.concat([PREFIX, Buffer.from(`${pending.id},`), line.subarray(start + sentId.length)])
      : Buffer.from(JSON.stringify({ ...message, id: JSON.parse(pending.id) as unknown }));
  pending.res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  pending.res.end(body);
}

let tail: Buffer | undefined;
child.stdout.on('data', (chunk: Buffer) => {
  let data = tail ? Buffer.concat([tail, chunk]) : chunk;
  tail = undefined;
  for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10)) {
    if (nl > 0) answer(data.subarray(0, nl));
    data = data.subarray(nl + 1);
  }
  if (data.length > 0) tail = Buffer.from(data);
});

const server = createServer({ noDelay: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const message = JSON.parse(body.toString('utf8')) as { id?: unknown; method?: string };
    if (message.id === undefined) {
      child.stdin.write(`${JSON.stringify(message)}\n`);
      res.writeHead(202).end();
      return;
    }
    if (message.method === 'initialize') res.setHeader('mcp-session-id', randomUUID());
    const upstreamId = nextId++;
    waiting.set(upstreamId, { res, id: JSON.stringify(message.id) });
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
