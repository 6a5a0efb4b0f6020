/**
 * The answer to one POST request that Moat itself composes (the stdio backend, and the era
 * adapters of both backends): JSON unless something related must be streamed first, then SSE.
 */
import type { ServerResponse } from 'node:http';
import type { EdgeRequest } from '../types.js';
import { SseWriter, startEventStream } from './sse.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../mcp/jsonrpc.js';

/** Where the answer to one request goes, and the server messages related to it. */
export interface RequestSink {
  /** Carries a server message related to the request; false when it cannot (the session stream is tried next). */
  related(message: JsonRpcMessage): boolean;
  /** The final response; `httpStatus` is a hint for sinks that have not started answering (504 on timeout). */
  respond(response: JsonRpcResponse, httpStatus?: number): void;
}

/** Answers one POST request: JSON unless something related must be streamed first. */
export class PostSink implements RequestSink {
  #sse?: SseWriter;
  #done = false;
  #closed = false;
  readonly finished: Promise<void>;
  #resolve!: () => void;

  constructor(
    private readonly request: EdgeRequest,
    private readonly accepts: { json: boolean; sse: boolean },
    private readonly keepAliveMs: number,
    private readonly headers: Record<string, string> = {},
    onAbort?: () => void,
  ) {
    this.finished = new Promise((resolve) => (this.#resolve = resolve));
    request.res.once('close', () => {
      if (this.#done) return;
      this.#closed = true;
      this.#resolve();
      onAbort?.();
    });
  }

  related(message: JsonRpcMessage): boolean {
    if (this.#done || this.#closed) return false;
    if (!this.#sse) {
      if (!this.accepts.sse) return false;
      startEventStream(this.request.res, this.headers);
      this.#sse = new SseWriter(this.request.res, { keepAliveMs: this.keepAliveMs });
    }
    return this.#sse.message(message);
  }

  respond(response: JsonRpcResponse, httpStatus = 200): void {
    if (this.#done) return;
    this.#done = true;
    if (response.error) this.request.annotations.rpcErrorCode = response.error.code;
    if (!this.#closed) {
      if (this.#sse) {
        this.#sse.message(response);
        this.#sse.end();
      } else if (this.accepts.json) {
        writeJson(this.request.res, response.error ? httpStatus : 200, response, this.headers);
      } else {
        startEventStream(this.request.res, this.headers);
        const sse = new SseWriter(this.request.res, { keepAliveMs: 0 });
        sse.message(response);
        sse.end();
      }
    }
    this.#resolve();
  }
}

function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function acceptsOf(request: EdgeRequest): { json: boolean; sse: boolean } {
  const accept = (request.req.headers.accept ?? '*/*').toLowerCase();
  const any = accept.includes('*/*');
  return { json: any || accept.includes('application/json'), sse: accept.includes('text/event-stream') };
}
