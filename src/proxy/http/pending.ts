import { idKey, type JsonRpcId, type JsonRpcRequest } from '../../mcp/jsonrpc.js';
/**
 * Requests forwarded but not yet answered, per client session, so a response arriving on another
 * stream (legacy SSE, or a resumed GET stream) can still be matched to its request for the
 * server-side policies. In-process only; bounded per session, and sessions not heard of for a
 * while are dropped (a session can expire in the store without this process noticing).
 */

const MAX_PER_SESSION = 256;
const FORGET_AFTER_MS = 15 * 60_000;

interface SessionRequests {
  requests: Map<string, JsonRpcRequest>;
  touched: number;
}

export class PendingRequests {
  readonly #bySession = new Map<string, SessionRequests>();
  #lastSweep = Date.now();

  add(sessionId: string, request: JsonRpcRequest): void {
    const now = Date.now();
    if (now - this.#lastSweep > FORGET_AFTER_MS) this.#sweep(now);
    let entry = this.#bySession.get(sessionId);
    if (!entry) {
      entry = { requests: new Map(), touched: now };
      this.#bySession.set(sessionId, entry);
    }
    entry.touched = now;
    if (entry.requests.size >= MAX_PER_SESSION) {
      const oldest = entry.requests.keys().next().value;
      if (oldest !== undefined) entry.requests.delete(oldest);
    }
    entry.requests.set(idKey(request.id), request);
  }

  /** Removes and returns the request a response answers. */
  take(sessionId: string, id: JsonRpcId): JsonRpcRequest | undefined {
    const entry = this.#bySession.get(sessionId);
    const request = entry?.requests.get(idKey(id));
    if (entry && request) {
      entry.requests.delete(idKey(id));
      if (entry.requests.size === 0) this.#bySession.delete(sessionId);
    }
    return request;
  }

  forget(sessionId: string): void {
    this.#bySession.delete(sessionId);
  }

  #sweep(now: number): void {
    this.#lastSweep = now;
    for (const [id, entry] of this.#bySession) {
      if (now - entry.touched > FORGET_AFTER_MS) this.#bySession.delete(id);
    }
  }
}

/**
 * Whether SSE text sets an event id (a line starting `id:`). Only then can a client resume the
 * stream (GET with Last-Event-ID) and get an answer there instead: a POST stream without one
 * leaves nothing to remember once it ends.
 */
export function setsEventId(text: string | Buffer): boolean {
  const first =
    typeof text === 'string'
      ? text.startsWith('id:')
      : text[0] === 0x69 && text[1] === 0x64 && text[2] === 0x3a;
  return first || text.includes('\nid:') || text.includes('\rid:');
}
