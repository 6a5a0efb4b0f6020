/**
 * The reference: the least a Node.js HTTP proxy can do, built from the fastest parts we found
 * (node:http server, undici's pool and dispatch API upstream, whole small bodies in one write
 * each way). No sessions, no checks, no header filtering beyond hop-by-hop headers. What this
 * reaches is what one Node.js HTTP hop costs on this machine.
 *
 * Answers to POST (and DELETE) are buffered whole and sent with a Content-Length: an SSE-framed
 * tools/call answer ends after its one event, so this is the cheapest correct relay for it. A GET
 * is the MCP SDK client's standalone stream (one per session, opened after initialization), which
 * the server never ends: it is relayed as a stream, and aborted upstream when the client goes away
 * (the client aborts it on close). Buffering it would hold one upstream connection per session
 * forever, and the pool would run out after a few bench runs and stall the cell. Relaying it,
 * rather than answering 405 (which the SDK client also accepts), keeps the backend's work per
 * session the same as in the direct and Moat cells of the same rounds.
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

function failed(res: ServerResponse, err: Error): void {
  process.stderr.write(`pipe proxy: ${String(err)}\n`);
  res.destroy();
}

/** Buffers the answer and sends it with its headers in one write. */
function relayWhole(res: ServerResponse): Dispatcher.DispatchHandler {
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
    onResponseError: (_controller, err) => failed(res, err),
  };
}

/** Streams the answer as it comes; the upstream request ends when the client goes away. */
function relayStream(res: ServerResponse): Dispatcher.DispatchHandler {
  let upstream: Dispatcher.DispatchController | undefined;
  let gone = false;
  const leave = () => upstream?.abort(new Error('the client went away'));
  res.on('close', () => {
    gone = !res.writableFinished;
    if (gone) leave();
  });
  return {
    onRequestStart: (controller) => {
      upstream = controller;
      if (gone) leave();
    },
    onResponseStart: (_controller, statusCode, answerHeaders) => {
      res.writeHead(statusCode, without(answerHeaders));
      res.flushHeaders();
    },
    onResponseData: (_controller, chunk) => void res.write(chunk),
    onResponseEnd: () => void res.end(),
    onResponseError: (_controller, err) => {
      if (!res.destroyed) failed(res, err);
    },
  };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const headers = without(req.headers) as Record<string, string>;
    const method = req.method ?? 'GET';
    pool.dispatch(
      { path: req.url ?? '/', method, headers, body: method === 'GET' ? null : Buffer.concat(chunks) },
      method === 'GET' ? relayStream(res) : relayWhole(res),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
