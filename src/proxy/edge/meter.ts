/**
 * Counts the body bytes of a response, for exchange observers (audit's response_size_bytes). The
 * edge owns the response, so it measures what it sends; installed only when an observer is
 * configured, so an unobserved proxy pays nothing.
 */
import type { ServerResponse } from 'node:http';

export function meterBody(res: ServerResponse): () => number {
  let total = 0;
  const count = (chunk: unknown, encoding?: unknown): void => {
    if (typeof chunk === 'string') {
      total += Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    } else if (chunk instanceof Uint8Array) {
      total += chunk.byteLength;
    }
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((...args: unknown[]) => {
    count(args[0], args[1]);
    return write(...args);
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    count(args[0], args[1]);
    return end(...args);
  }) as typeof res.end;
  return () => total;
}
