/**
 * One bridged request whose backend asked for input: the call held open at the backend while the
 * client answers, round after round. A round is what the backend asks at once: the input requests
 * it sends until it has been quiet for GATHER_MS (a server asking for three things in parallel
 * asks them within microseconds), or its final answer. Input requests the client leaves
 * unanswered on a retry are asked again in the next round; answers for keys never asked are
 * ignored. A first request may already carry answers (`inputResponses` without a state): one
 * whose key matches what the backend asks answers it at once.
 */
import type { JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import type { BackendInputRequest, BridgedCall, BridgeEvent } from '../down/seam.js';
import { embeddedRequest, inputKey, missingCapability, undeclaredError } from './inputs.js';
import { isObject } from '../../../util/is-object.js';

/** How long a round waits for further input requests after one arrived. */
export const GATHER_MS = 50;

export type InputRequests = Record<string, { method: string; params: Record<string, unknown> }>;

export type RoundOutcome =
  | { kind: 'final'; response: JsonRpcResponse }
  | { kind: 'input'; inputRequests: InputRequests }
  /** Everything the backend asked in the round needs a capability the client did not declare. */
  | { kind: 'missing'; requiredCapabilities: Record<string, unknown> };

export class Flight {
  readonly #call: BridgedCall;
  /** Input requests asked of the client and not answered yet, by key. */
  readonly #open = new Map<string, BackendInputRequest>();
  /** Every key used in this call's rounds: a key is never reused for another request. */
  readonly #keys = new Set<string>();
  #counter = 0;
  /** Undeclared input requests of the current round, refused when it ends. */
  readonly #undeclared: Array<{ input: BackendInputRequest; missing: Record<string, unknown> }> = [];
  /** Input responses the first request carried, for keys the backend has not asked yet. */
  readonly #given: Record<string, unknown>;
  /** A `next()` still running when a round ended: the next round starts with it. */
  #pending: Promise<BridgeEvent> | undefined;

  constructor(
    call: BridgedCall,
    /** Who the call belongs to (principal key) and what it asked (request digest). */
    readonly principal: string,
    readonly digest: string,
  ) {
    this.#call = call;
    const given = call.request.params?.inputResponses;
    this.#given = isObject(given) ? { ...given } : {};
  }

  /** The first round, from the call's first input request. */
  firstRound(first: BackendInputRequest): Promise<RoundOutcome> {
    const caps = this.#call.clientCapabilities;
    this.#offer(first, caps);
    return this.#gather(caps);
  }

  /** Feeds the client's answers to the backend's waiting requests, then runs to the next round. */
  resume(inputResponses: Record<string, unknown>, caps: Record<string, unknown>): Promise<RoundOutcome> {
    for (const [key, input] of this.#open) {
      const answer = inputResponses[key];
      if (!isObject(answer)) continue;
      this.#call.answer(input.id, { result: answer });
      this.#open.delete(key);
    }
    return this.#gather(caps);
  }

  cancel(reason: string): void {
    this.#call.cancel(reason);
  }

  /** Held for the client's retry (true), or resumed (false). */
  waitForClient(waiting: boolean): void {
    this.#call.waitForClient?.(waiting);
  }

  /**
   * Asks the client for `input` when it declared the kind. An undeclared one is held to the
   * round's end: refused to the backend then, and when nothing else was asked the call ends with
   * -32021 naming what the client lacks (the answer a 2026-07-28 server gives).
   */
  #offer(input: BackendInputRequest, caps: Record<string, unknown>): void {
    const missing = missingCapability(input, caps);
    if (missing) {
      this.#undeclared.push({ input, missing });
      return;
    }
    const key = inputKey(input, ++this.#counter, (taken) => this.#keys.has(taken));
    this.#keys.add(key);
    const given = this.#given[key];
    if (isObject(given)) {
      // The client answered this key up front (a request may carry inputResponses without a state).
      delete this.#given[key];
      this.#call.answer(input.id, { result: given });
      return;
    }
    this.#open.set(key, input);
  }

  async #gather(caps: Record<string, unknown>): Promise<RoundOutcome> {
    for (;;) {
      const asked = this.#open.size > 0 || this.#undeclared.length > 0;
      const event = asked ? await this.#nextWithin(GATHER_MS) : await this.#next();
      if (event === undefined) return this.#endRound();
      if (event.kind === 'final') {
        this.#open.clear();
        this.#undeclared.length = 0;
        return { kind: 'final', response: event.response };
      }
      this.#offer(event.input, caps);
    }
  }

  #endRound(): RoundOutcome {
    const requiredCapabilities: Record<string, unknown> = {};
    for (const { input, missing } of this.#undeclared.splice(0)) {
      this.#call.answer(input.id, { error: undeclaredError(missing) });
      Object.assign(requiredCapabilities, missing);
    }
    if (this.#open.size === 0) {
      this.#call.cancel('the client did not declare a capability the server needs');
      return { kind: 'missing', requiredCapabilities };
    }
    const inputRequests: InputRequests = {};
    for (const [key, input] of this.#open) inputRequests[key] = embeddedRequest(input);
    return { kind: 'input', inputRequests };
  }

  #next(): Promise<BridgeEvent> {
    const pending = this.#pending ?? this.#call.next();
    this.#pending = undefined;
    return pending;
  }

  /** The next event if it comes within `ms`; otherwise undefined (and it is kept for later). */
  async #nextWithin(ms: number): Promise<BridgeEvent | undefined> {
    const pending = (this.#pending ??= this.#call.next());
    let timer: NodeJS.Timeout | undefined;
    const quiet = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
    const event = await Promise.race([pending, quiet]);
    clearTimeout(timer);
    if (event !== undefined) this.#pending = undefined;
    return event;
  }
}
