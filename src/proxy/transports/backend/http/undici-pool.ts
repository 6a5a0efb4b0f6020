/**
 * Upstream HTTP exchanges on undici's connection pool, through its low-level dispatch API.
 *
 * - The pool comes from its own module: the package entry also loads fetch, WebSocket, caches
 *   and more (about 12 MB resident, which the proxy would carry for nothing); the pool is ~1.5 MB.
 * - The handler below replaces undici's `request()` helper, whose per-request async resource and
 *   body stream made the proxy's young generation grow to ~140 MB under load; this one makes one
 *   plain Readable per response.
 * - undici rather than node:http's client: it forwards more requests per second here (bench/).
 */
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher, Pool } from 'undici';
import { keepAliveOptions } from './keep-alive.js';

const require = createRequire(import.meta.url);
const PoolClass = require('undici/lib/dispatcher/pool.js') as typeof Pool;

export type UpstreamPool = Pool;

export interface UpstreamExchange {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The response body; destroying it aborts the exchange. */
  body: Readable;
  /**
   * The whole body, already read, when the answer was small with a known length and not a
   * stream: the common JSON answer skips the stream machinery (`body` still works).
   */
  whole?: Buffer;
}

/** An answer read whole; its stream is only made for callers that ask for one. */
class WholeExchange implements UpstreamExchange {
  #body: Readable | undefined;

  constructor(
    readonly statusCode: number,
    readonly headers: IncomingHttpHeaders,
    readonly whole: Buffer,
  ) {}

  get body(): Readable {
    this.#body ??= Readable.from([this.whole], { objectMode: false });
    return this.#body;
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
    let body: Readable | undefined;
    let whole: { statusCode: number; headers: IncomingHttpHeaders; chunks: Buffer[] } | undefined;
    let settled = false;
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
        if (knownSmallLength(headers)) {
          whole = { statusCode, headers, chunks: [] };
          return;
        }
        body = new Readable({
          read: () => ctrl.resume(),
          destroy: (err, done) => {
            if (!settled) ctrl.abort(err ?? new Error('response body discarded'));
            finish();
            done(err);
          },
        });
        // A body failing before its consumer listens (aborted, or its pool destroyed, while the
        // answer is handed over) must not be an uncaught error; consumers add their own listener.
        body.on('error', () => {});
        resolve({ statusCode, headers, body });
      },
      onResponseData: (ctrl, chunk) => {
        if (whole) whole.chunks.push(chunk);
        else if (body && !body.push(chunk)) ctrl.pause();
      },
      onResponseEnd: () => {
        settled = true;
        finish();
        if (whole) {
          const { chunks } = whole;
          const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
          resolve(new WholeExchange(whole.statusCode, whole.headers, bytes));
        } else body?.push(null);
      },
      onResponseError: (_ctrl, error) => {
        settled = true;
        finish();
        if (body) body.destroy(error);
        else reject(error);
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
