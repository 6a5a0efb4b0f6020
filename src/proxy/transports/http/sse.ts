/**
 * Server-Sent Events plumbing for the forwarder: an incremental event parser (so policies can see
 * SSE-framed JSON-RPC messages) and a writer that keeps idle streams alive with `:` comments,
 * inserted only between events so a comment never splits one.
 */
import type { ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** The event as received, including its terminating blank line. */
  raw: string;
  event?: string;
  /** The data lines joined with '\n'; undefined when the event has no data field. */
  data?: string;
}

/** Splits a byte stream into SSE events; call push() per chunk, flush() at the end. */
export class SseParser {
  readonly #decoder = new StringDecoder('utf8');
  #buffer = '';

  push(chunk: Buffer | string): SseEvent[] {
    this.#buffer += typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const events: SseEvent[] = [];
    for (;;) {
      const end = /\r?\n\r?\n/.exec(this.#buffer);
      if (!end) break;
      const stop = end.index + end[0].length;
      events.push(parseEvent(this.#buffer.slice(0, stop)));
      this.#buffer = this.#buffer.slice(stop);
    }
    return events;
  }

  /** The unterminated rest, if any (passed through unchanged when the stream ends). */
  flush(): string {
    const rest = this.#buffer + this.#decoder.end();
    this.#buffer = '';
    return rest;
  }
}

function parseEvent(raw: string): SseEvent {
  const event: SseEvent = { raw };
  const data: string[] = [];
  for (const line of raw.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event.event = value;
  }
  if (data.length > 0) event.data = data.join('\n');
  return event;
}

/** The event with its data replaced; every other field (id, event, retry) is kept. */
export function withData(event: SseEvent, data: string): string {
  const kept = event.raw.split(/\r?\n/).filter((line) => line !== '' && !/^data(:|$)/.test(line));
  return `${[...kept, ...data.split('\n').map((d) => `data: ${d}`)].join('\n')}\n\n`;
}

export function formatEvent(event: string, data: string): string {
  return `event: ${event}\n${data
    .split('\n')
    .map((d) => `data: ${d}`)
    .join('\n')}\n\n`;
}

/**
 * Writes to an SSE response with backpressure, and sends a keep-alive comment when nothing was
 * written for a whole interval and the stream is between events.
 */
export class SseWriter {
  readonly #res: ServerResponse;
  #atBoundary = true;
  #wroteSinceTick = false;
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(res: ServerResponse, keepAliveMs: number, onKeepAlive?: () => void) {
    this.#res = res;
    this.#timer = setInterval(() => {
      if (!this.#wroteSinceTick && this.#atBoundary && !this.#closed) {
        res.write(': keep-alive\n\n');
        onKeepAlive?.();
      }
      this.#wroteSinceTick = false;
    }, keepAliveMs);
    this.#timer.unref();
    res.once('close', () => this.stop());
  }

  get closed(): boolean {
    return this.#closed || this.#res.destroyed;
  }

  /** Writes at once; returns a promise only when the client is slow and the caller must wait. */
  write(text: string | Buffer): Promise<void> | undefined {
    if (this.closed || text.length === 0) return undefined;
    this.#wroteSinceTick = true;
    const tail = typeof text === 'string' ? text.slice(-4) : text.subarray(-4).toString('latin1');
    this.#atBoundary = tail.endsWith('\n\n') || tail.endsWith('\r\n\r\n');
    return this.#res.write(text) ? undefined : drained(this.#res);
  }

  stop(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }
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
