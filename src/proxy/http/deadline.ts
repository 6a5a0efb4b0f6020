/**
 * The bound on one upstream exchange (`upstream_timeout`): an abort signal that fires when the
 * client goes away or when the time is up, and tells the two apart.
 */
import type { ServerResponse } from 'node:http';
import { reject, type ProxyRejection } from '../pipeline/errors.js';
import { RPC, type JsonRpcId } from '../../mcp/jsonrpc.js';
import { UpstreamTimeout, upstreamTimeoutMessage } from '../pipeline/upstream-timeout.js';

export interface UpstreamDeadline {
  /** Aborts when the client goes away, or with an UpstreamTimeout when the time is up. */
  signal: AbortSignal;
  /** Ends the time bound (e.g. once a long-lived stream has opened); the client one stays. */
  stop(): void;
}

/**
 * Starts the bound on one exchange; the caller stops it once the exchange is over. `clientGone`
 * is a signal, or the client's response, whose close before it finished aborts the exchange.
 * One abort controller and one timer per request, no promise: this is on every request's path.
 */
export function startDeadline(ms: number, clientGone: AbortSignal | ServerResponse): UpstreamDeadline {
  return new ExchangeDeadline(ms, clientGone);
}

class ExchangeDeadline implements UpstreamDeadline {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;

  constructor(ms: number, clientGone: AbortSignal | ServerResponse) {
    const controller = this.#controller;
    this.#timer = setTimeout(() => controller.abort(new UpstreamTimeout(ms)), ms);
    if (clientGone instanceof AbortSignal) {
      clientGone.addEventListener('abort', () => controller.abort(clientGone.reason), { once: true });
    } else {
      // on(), not once(): the response is dropped after its close, and once() wraps the listener.
      clientGone.on('close', () => {
        if (!clientGone.writableFinished) controller.abort();
      });
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}

/** What escapes an exchange run under a deadline: a timeout becomes a 504 for request `id`. */
export function deadlineFailure(err: unknown, id: JsonRpcId | null): unknown {
  return err instanceof UpstreamTimeout ? timeoutRejection(err, id) : err;
}

/**
 * Runs one upstream exchange under a deadline of `ms` (see startDeadline); a timeout that
 * escapes `run` becomes a 504 with a JSON-RPC error for request `id`.
 */
export async function withDeadline<T>(
  ms: number,
  clientGone: AbortSignal | ServerResponse,
  id: JsonRpcId | null,
  run: (deadline: UpstreamDeadline) => Promise<T>,
): Promise<T> {
  const deadline = startDeadline(ms, clientGone);
  try {
    return await run(deadline);
  } catch (err) {
    throw deadlineFailure(err, id);
  } finally {
    deadline.stop();
  }
}

/** The answer for a timed-out exchange: 504 with a JSON-RPC error. */
export function timeoutRejection(timeout: UpstreamTimeout, id: JsonRpcId | null): ProxyRejection {
  return reject(504, RPC.serverError, upstreamTimeoutMessage(timeout.ms), { id });
}
