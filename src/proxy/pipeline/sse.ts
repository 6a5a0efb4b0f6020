/**
 * Server-Sent Events, the one writer of every event stream the proxy sends a client (the parser
 * and formatting, which policies use to see SSE-framed JSON-RPC messages, are src/mcp/sse.ts). The writer honours backpressure: a relay awaits
 * it; a source that pushes (the stdio bridge) is cut off when the client stops reading and too
 * much is buffered, rather than growing memory without bound. Idle streams get `:` keep-alive
 * comments, only ever between events.
 */
import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage } from '../../mcp/jsonrpc.js';
import { formatEvent } from '../../mcp/sse.js';

/** The headers of every event stream the proxy starts itself (no caching, no proxy buffering). */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** Bytes a client may leave unread on a pushed stream before it is cut off. */
export const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

/** Answers with status 200 and the SSE headers, sent at once so the client sees the stream open. */
export function startEventStream(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { ...SSE_HEADERS, ...headers });
  res.flushHeaders();
}

export interface SseWriterOptions {
  /** Interval of keep-alive comments on an idle stream; 0 sends none. */
  keepAliveMs: number;
  /** Called whenever a keep-alive is sent (e.g. to refresh the session's TTL). */
  onKeepAlive?: () => void;
  /** Called once when the client's connection closes. */
  onClose?: () => void;
}

/** Writes an event stream to a client whose response has already started. */
export class SseWriter {
  readonly #res: ServerResponse;
  #atBoundary = true;
  #wroteSinceTick = false;
  readonly #timer?: NodeJS.Timeout;
  #closed = false;

  constructor(res: ServerResponse, options: SseWriterOptions) {
    this.#res = res;
    if (options.keepAliveMs > 0) {
      this.#timer = setInterval(() => {
        if (!this.#wroteSinceTick && this.#atBoundary && !this.closed) {
          res.write(': keep-alive\n\n');
          options.onKeepAlive?.();
        }
        this.#wroteSinceTick = false;
      }, options.keepAliveMs);
      this.#timer.unref();
    }
    res.once('close', () => {
      this.stop();
      options.onClose?.();
    });
  }

  get closed(): boolean {
    return this.#closed || this.#res.writableEnded || this.#res.destroyed;
  }

  /** Everything written so far ends with a whole event (none is cut off half-way). */
  get atEventBoundary(): boolean {
    return this.#atBoundary;
  }

  /** Writes at once; returns a promise only when the client is slow and the caller must wait. */
  write(text: string | Buffer): Promise<void> | undefined {
    if (this.closed || text.length === 0) return undefined;
    this.#wroteSinceTick = true;
    this.#atBoundary = endsWithBlankLine(text);
    return this.#res.write(text) ? undefined : drained(this.#res);
  }

  /**
   * Sends one event from a source that cannot wait; false when the stream is closed. A client
   * that leaves more than MAX_UNREAD_BYTES unread is disconnected.
   */
  event(name: string, data: string): boolean {
    if (this.closed) return false;
    void this.write(formatEvent(name, data));
    if (this.#res.writableLength > MAX_UNREAD_BYTES) {
      this.stop();
      this.#res.destroy();
      return false;
    }
    return true;
  }

  message(message: JsonRpcMessage): boolean {
    return this.event('message', JSON.stringify(message));
  }

  /** Stops the keep-alives and ends the response. */
  end(): void {
    this.stop();
    if (!this.#res.writableEnded && !this.#res.destroyed) this.#res.end();
  }

  /** Stops the keep-alives; the response stays open for its owner to end. */
  stop(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }
}

/** The text ends with "\n\n" or "\r\n\r\n", so an event ends there (read in place, no copy). */
export function endsWithBlankLine(text: string | Buffer): boolean {
  if (typeof text === 'string') return text.endsWith('\n\n') || text.endsWith('\r\n\r\n');
  const n = text.length;
  if (text[n - 1] !== 0x0a) return false;
  return text[n - 2] === 0x0a || (text[n - 2] === 0x0d && text[n - 3] === 0x0a && text[n - 4] === 0x0d);
}

/** Resolves when the response can take more data, or is gone. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
