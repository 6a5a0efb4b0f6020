/**
 * Counts the body bytes of a response, for exchange observers (audit's response_size_bytes). The
 * edge owns the response, so it measures what it sends; installed only when an observer is
 * configured, so an unobserved proxy pays nothing.
 */
import type { ServerResponse } from 'node:http';

export function meterBody(res: ServerResponse): () => number {
  let total = 0;
  const count = (chunk: unknown, encoding: unknown): void => {
    if (typeof chunk === 'string') {
      total += Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    } else if (chunk instanceof Uint8Array) {
      total += chunk.byteLength;
    }
  };
  // Fixed parameters and call() rather than bind() and rest arguments: this runs per request.
  type Method = (this: ServerResponse, chunk: unknown, encoding: unknown, callback: unknown) => unknown;
  const write = Reflect.get(res, 'write') as Method;
  const end = Reflect.get(res, 'end') as Method;
  res.write = function (this: ServerResponse, chunk: unknown, encoding?: unknown, callback?: unknown) {
    count(chunk, encoding);
    return write.call(this, chunk, encoding, callback);
  } as typeof res.write;
  res.end = function (this: ServerResponse, chunk?: unknown, encoding?: unknown, callback?: unknown) {
    count(chunk, encoding);
    return end.call(this, chunk, encoding, callback);
  } as typeof res.end;
  return () => total;
}
