/**
 * Upstream HTTP exchanges on undici's connection pool, through its low-level dispatch API.
 *
 * - The pool comes from its own module (src/util/undici-parts.ts), not the package entry.
 * - The handler below replaces undici's `request()` helper, whose per-request async resource and
 *   body stream made the proxy's young generation grow to ~140 MB under load; this one hands a
 *   streamed body to a sink as undici parses it (a plain Readable only for callers that ask).
 * - undici rather than node:http's client: it forwards more requests per second here (bench/).
 */
import { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher, Pool } from 'undici';
import { UndiciPool as PoolClass } from '../../util/undici-parts.js';
import { keepAliveOptions } from './keep-alive.js';

export type UpstreamPool = Pool;

export interface UpstreamExchange {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The response body as a stream, made when first asked for; destroying it aborts the exchange. */
  body: Readable;
  /**
   * The whole body, already read, when the answer was small with a known length and not a
   * stream: the common JSON answer skips the stream machinery (`body` still works).
   */
  whole?: Buffer;
  /**
   * Hands the body to `sink` chunk by chunk as undici parses it, with no stream in between: a
   * chunk and the body's end that arrive together reach the sink in the same tick. Either this
   * or `body`, once.
   */
  consume(sink: BodySink): void;
}

/** Holds back a consumed body (backpressure) or ends the exchange early. */
export interface BodyFlow {
  /** No further chunk (nor the end) is delivered until resume(). */
  pause(): void;
  resume(): void;
  /** Aborts the exchange if it is still open; the sink then gets error(). */
  abort(reason: Error): void;
}

export interface BodySink {
  data(chunk: Buffer, flow: BodyFlow): void;
  end(): void;
  error(err: Error): void;
}

/** Bytes of a streamed body held for a consumer not there yet before the upstream is paused. */
const HELD_LIMIT = 16 * 1024;

/**
 * One answer's body, fed by the dispatch handler (push, end, fail) and read either by a sink
 * (consume) or, made on demand, a Readable (body). Chunks that arrive before either are held.
 */
class StreamExchange implements UpstreamExchange, BodyFlow {
  whole?: Buffer;
  #held: Buffer[] = [];
  #heldBytes = 0;
  #sink: BodySink | undefined;
  #body: Readable | undefined;
  #paused = false;
  #ended = false;
  #endDelivered = false;
  #error: Error | undefined;
  #settled = false;
  readonly #ctrl: Dispatcher.DispatchController;
  /** Called when the exchange is over (ended, failed or aborted); may be called more than once. */
  readonly #onSettled: () => void;

  constructor(
    readonly statusCode: number,
    readonly headers: IncomingHttpHeaders,
    ctrl: Dispatcher.DispatchController,
    onSettled: () => void,
  ) {
    this.#ctrl = ctrl;
    this.#onSettled = onSettled;
  }

  /** An answer read whole before it was handed over. */
  static read(
    statusCode: number,
    headers: IncomingHttpHeaders,
    ctrl: Dispatcher.DispatchController,
    whole: Buffer,
  ): StreamExchange {
    const exchange = new StreamExchange(statusCode, headers, ctrl, () => {});
    exchange.whole = whole;
    exchange.push(whole);
    exchange.end();
    return exchange;
  }

  get body(): Readable {
    if (this.#sink) throw new Error('the body of this answer is already being consumed');
    if (!this.#body) {
      const body = new Readable({
        read: () => this.#ctrl.resume(),
        destroy: (err, done) => {
          this.abort(err ?? new Error('response body discarded'));
          done(err);
        },
      });
      // A body failing before its consumer listens (aborted, or its pool destroyed, while the
      // answer is handed over) must not be an uncaught error; consumers add their own listener.
      body.on('error', () => {});
      this.#body = body;
      for (const chunk of this.#held) body.push(chunk);
      this.#held = [];
      if (this.#error) body.destroy(this.#error);
      else if (this.#ended) body.push(null);
    }
    return this.#body;
  }

  consume(sink: BodySink): void {
    if (this.#sink || this.#body) throw new Error('the body of this answer is already being read');
    this.#sink = sink;
    if (this.#error) sink.error(this.#error);
    else this.#drain();
  }

  pause(): void {
    this.#paused = true;
    this.#ctrl.pause();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#drain();
  }

  abort(reason: Error): void {
    if (this.#settled) return;
    this.#ctrl.abort(reason);
    this.#onSettled();
  }

  /** A chunk from undici. */
  push(chunk: Buffer): void {
    if (this.#body) {
      if (!this.#body.push(chunk)) this.#ctrl.pause();
    } else if (this.#sink && !this.#paused) this.#sink.data(chunk, this);
    else {
      this.#held.push(chunk);
      this.#heldBytes += chunk.length;
      if (this.#paused || this.#heldBytes >= HELD_LIMIT) this.#ctrl.pause();
    }
  }

  /** The body's end, from undici. */
  end(): void {
    this.#ended = true;
    this.#settle();
    if (this.#body) this.#body.push(null);
    else if (this.#sink && !this.#paused) this.#drain();
  }

  /** The exchange failed (aborted, reset, timed out). */
  fail(err: Error): void {
    this.#settle();
    this.#error = err;
    this.#held = [];
    if (this.#body) this.#body.destroy(err);
    else this.#sink?.error(err);
  }

  #settle(): void {
    this.#settled = true;
    this.#onSettled();
  }

  /** Delivers held chunks to the sink until it pauses; then the end, or more from upstream. */
  #drain(): void {
    const sink = this.#sink as BodySink;
    while (!this.#paused && this.#held.length > 0) {
      const chunk = this.#held.shift() as Buffer;
      this.#heldBytes -= chunk.length;
      sink.data(chunk, this);
    }
    if (this.#paused || this.#error) return;
    if (!this.#ended) this.#ctrl.resume();
    else if (!this.#endDelivered) {
      this.#endDelivered = true;
      sink.end();
    }
  }
}

/** Answers up to this size with a Content-Length are read whole before the exchange resolves. */
const WHOLE_BODY_LIMIT = 64 * 1024;

function knownSmallLength(headers: IncomingHttpHeaders): boolean {
  const length = Number(headers['content-length']);
  return (
    Number.isSafeInteger(length) &&
    length <= WHOLE_BODY_LIMIT &&
    !String(headers['content-type']).startsWith('text/event-stream')
  );
}

export function createPool(origin: string): UpstreamPool {
  return new PoolClass(origin, {
    connections: 256,
    // Streams (SSE, GET) may stay open and silent for hours; the edge owns the client-facing timeouts.
    headersTimeout: 0,
    bodyTimeout: 0,
    // Idle connections close before the backend would close them (keep-alive.ts).
    ...keepAliveOptions(),
  });
}

export interface ExchangeOptions {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Aborting ends the exchange, an open response body included. */
  signal: AbortSignal;
}

/**
 * Sends a request; resolves with the response head and its body stream, or for a small answer
 * of known length with the whole body once it is in.
 */
export function exchange(pool: UpstreamPool, options: ExchangeOptions): Promise<UpstreamExchange> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let answer: StreamExchange | undefined;
    let whole: { statusCode: number; headers: IncomingHttpHeaders; chunks: Buffer[] } | undefined;
    const abort = () => {
      const reason = signal.reason as Error;
      if (controller) controller.abort(reason);
      else reject(reason);
    };
    signal.addEventListener('abort', abort, { once: true });
    const finish = () => signal.removeEventListener('abort', abort);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (ctrl) => {
        controller = ctrl;
      },
      onResponseStart: (ctrl, statusCode, headers) => {
        if (statusCode < 200) return; // 1xx informational: the real answer follows
        if (knownSmallLength(headers)) whole = { statusCode, headers, chunks: [] };
        else {
          answer = new StreamExchange(statusCode, headers, ctrl, finish);
          resolve(answer);
        }
      },
      onResponseData: (_ctrl, chunk) => {
        if (whole) whole.chunks.push(chunk);
        else answer?.push(chunk);
      },
      onResponseEnd: (ctrl) => {
        if (whole) {
          finish();
          const { chunks } = whole;
          const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
          resolve(StreamExchange.read(whole.statusCode, whole.headers, ctrl, bytes));
        } else answer?.end();
      },
      onResponseError: (_ctrl, error) => {
        if (answer) answer.fail(error);
        else {
          finish();
          reject(error);
        }
      },
    };
    try {
      pool.dispatch(
        {
          path: options.path,
          method: options.method,
          headers: options.headers,
          ...(options.body && options.body.length > 0 ? { body: options.body } : {}),
        },
        handler,
      );
    } catch (err) {
      finish();
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
