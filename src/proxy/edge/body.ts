/**
 * Reads a request body into memory with two limits: a byte limit (413, checked against
 * Content-Length before reading and while streaming) and a deadline for the whole read (408).
 */
import type { IncomingMessage } from 'node:http';
import { reject } from '../pipeline/errors.js';
import { RPC } from '../../mcp/jsonrpc.js';

export function tooLarge(limit: number) {
  return reject(413, RPC.invalidRequest, `Request body too large: the limit is ${limit} bytes`);
}

/**
 * How much of a refused body the edge still reads so the client can see its 413 (then it closes).
 * More than the bytes a client can have in flight on a loopback connection when the answer reaches
 * it (the kernel's send and receive buffers grow to several MiB each): a client such as fetch()
 * stops sending once it has read the answer, and only a connection closed under bytes still
 * arriving is reset, which throws the unread answer away at the client.
 */
export const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * After a 413 went out: a client still sending would get a reset (and lose the answer) if the
 * connection closed under it, so the rest of the body is read and dropped, up to DRAIN_LIMIT_BYTES
 * and `timeoutMs`; past either bound the connection is closed. A body that ends in time leaves
 * the connection usable.
 */
export function drainRefusedBody(req: IncomingMessage, timeoutMs: number): void {
  if (req.complete) return;
  let drained = 0;
  const close = (): void => {
    clearTimeout(timer);
    req.off('data', onData);
    req.socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) close();
  };
  const timer = setTimeout(close, timeoutMs);
  req.on('data', onData);
  req.once('end', () => {
    clearTimeout(timer);
    req.off('data', onData);
  });
  req.resume();
}

/** Rejects at once when the declared Content-Length is over the limit. */
export function checkContentLength(req: IncomingMessage, limit: number): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
}

/** A leading UTF-8 BOM is not part of the JSON: parsed and forwarded bytes are the same. */
function withoutBom(body: Buffer): Buffer {
  return body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.subarray(3) : body;
}

/**
 * The body when all of it has already arrived (the usual small MCP message, parsed with its
 * headers): taken from the stream's buffer at once, so no deadline timer, listeners or flowing
 * mode are set up for it. Undefined when more is still to come.
 */
function bufferedBody(req: IncomingMessage, limit: number): Buffer | undefined {
  if (!req.complete || req.readableFlowing === true || req.readableLength > limit) return undefined;
  // read() returns everything buffered (null when nothing is) and lets the stream end.
  const body = (req.read() as Buffer | null) ?? Buffer.alloc(0);
  return withoutBom(body);
}

export function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  const buffered = bufferedBody(req, limit);
  return buffered ? Promise.resolve(buffered) : streamedBody(req, limit, timeoutMs);
}

/**
 * A body still arriving (e.g. fetch sends the body after the head, in its own packet): read in
 * paused mode on 'readable', which costs fewer listeners and ticks than flowing mode. The end is
 * seen from `req.complete` once the buffer is empty. No 'error' listener: a request emits 'error'
 * only to listeners, and its 'close' reports a client gone before the end.
 */
function streamedBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, rejectPromise) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (err: Error): void => {
      clearTimeout(timer);
      // Listeners off, so a refused body can still be drained (drainRefusedBody) in flowing mode.
      req.off('readable', onReadable);
      req.off('close', onClose);
      rejectPromise(err);
    };
    const onReadable = (): void => {
      for (let chunk = req.read() as Buffer | null; chunk !== null; chunk = req.read() as Buffer | null) {
        size += chunk.length;
        if (size > limit) return fail(tooLarge(limit));
        chunks.push(chunk);
      }
      if (!req.complete) return;
      // All read: the stream ends by itself, and 'close' no longer matters (complete is set).
      clearTimeout(timer);
      resolve(withoutBom(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    };
    const onClose = (): void => {
      if (!req.complete) fail(new Error('client closed the connection while sending the request body'));
    };
    const timer = setTimeout(
      () =>
        fail(
          reject(
            408,
            RPC.serverError,
            `Request body not received within ${timeoutMs} ms (proxy read timeout)`,
            {
              headers: { connection: 'close' },
            },
          ),
        ),
      timeoutMs,
    );
    req.on('readable', onReadable);
    req.on('close', onClose);
  });
}
