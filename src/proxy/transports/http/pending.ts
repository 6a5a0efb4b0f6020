/**
 * Requests forwarded but not yet answered, per client session, so a response arriving on another
 * stream (legacy SSE, or a resumed GET stream) can still be matched to its request for the
 * server-side policies. Bounded per session; in-process only.
 */
import { idKey } from '../../pipeline/jsonrpc.js';
import type { JsonRpcId, JsonRpcRequest } from '../../types.js';

const MAX_PER_SESSION = 256;

export class PendingRequests {
  readonly #bySession = new Map<string, Map<string, JsonRpcRequest>>();

  add(sessionId: string, request: JsonRpcRequest): void {
    let requests = this.#bySession.get(sessionId);
    if (!requests) {
      requests = new Map<string, JsonRpcRequest>();
      this.#bySession.set(sessionId, requests);
    }
    if (requests.size >= MAX_PER_SESSION) {
      const oldest = requests.keys().next().value;
      if (oldest !== undefined) requests.delete(oldest);
    }
    requests.set(idKey(request.id), request);
  }

  /** Removes and returns the request a response answers. */
  take(sessionId: string, id: JsonRpcId): JsonRpcRequest | undefined {
    const requests = this.#bySession.get(sessionId);
    const request = requests?.get(idKey(id));
    if (request) {
      requests?.delete(idKey(id));
      if (requests?.size === 0) this.#bySession.delete(sessionId);
    }
    return request;
  }

  forget(sessionId: string): void {
    this.#bySession.delete(sessionId);
  }
}
