/**
 * A server-sent-events response: the headers every Moat SSE stream carries (no caching, no proxy
 * buffering), `event:`/`data:` frames, and `:` comment keep-alives so idle streams survive
 * intermediaries with idle timeouts.
 */
import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage } from '../../../mcp/jsonrpc.js';

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

export class SseStream {
  #open = true;
  readonly #keepAlive?: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    options: { keepAliveMs: number; headers?: Record<string, string>; onClose?: () => void },
  ) {
    res.writeHead(200, { ...SSE_HEADERS, ...options.headers });
    res.flushHeaders();
    if (options.keepAliveMs > 0) {
      this.#keepAlive = setInterval(() => this.#write(': keep-alive\n\n'), options.keepAliveMs);
      this.#keepAlive.unref();
    }
    res.once('close', () => {
      this.#stop();
      options.onClose?.();
    });
  }

  get open(): boolean {
    return this.#open;
  }

  /** Writes one event; false when the stream is closed. */
  event(name: string, data: string): boolean {
    return this.#write(`event: ${name}\ndata: ${data}\n\n`);
  }

  message(message: JsonRpcMessage): boolean {
    return this.event('message', JSON.stringify(message));
  }

  end(): void {
    if (!this.#open) return;
    this.#stop();
    this.res.end();
  }

  #write(text: string): boolean {
    if (!this.#open || this.res.writableEnded || this.res.destroyed) return false;
    this.res.write(text);
    return true;
  }

  #stop(): void {
    this.#open = false;
    clearInterval(this.#keepAlive);
  }
}
