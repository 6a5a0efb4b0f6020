/**
 * The reference: the least a Node.js HTTP proxy can do, built from the fastest parts we found
 * (node:http server, undici's pool and dispatch API upstream, whole small bodies in one write
 * each way). No sessions, no checks, no header filtering beyond hop-by-hop headers. What this
 * reaches is what one Node.js HTTP hop costs on this machine.
 * argv[2] is the backend URL; prints {"url"} when listening.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

const backend = new URL(process.argv[2] ?? '');
const pool = new Pool(backend.origin, { connections: 256, keepAliveTimeout: 60_000 });
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'host'];

function without(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = { ...headers };
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}

/** Buffers the answer and sends it with its headers in one write. */
function relay(res: ServerResponse): Dispatcher.DispatchHandler {
  let status = 502;
  let headers: IncomingHttpHeaders = {};
  const chunks: Buffer[] = [];
  return {
    onRequestStart: () => undefined,
    onResponseStart: (_controller, statusCode, answerHeaders) => {
      status = statusCode;
      headers = answerHeaders;
    },
    onResponseData: (_controller, chunk) => void chunks.push(chunk),
    onResponseEnd: () => {
      const body = Buffer.concat(chunks);
      res.writeHead(status, { ...without(headers), 'content-length': body.length });
      res.end(body);
    },
    onResponseError: (_controller, err) => {
      process.stderr.write(`pipe proxy: ${String(err)}\n`);
      res.destroy();
    },
  };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const headers = without(req.headers) as Record<string, string>;
    pool.dispatch(
      { path: req.url ?? '/', method: req.method ?? 'GET', headers, body: Buffer.concat(chunks) },
      relay(res),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
