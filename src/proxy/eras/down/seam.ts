/**
 * The seam between the era bridge and multi round-trip requests (MRTR).
 *
 * Contract. For every bridged request (a 2026-07-28 client in front of a 2025-era server) the
 * bridge runs the backend exchange as a `BridgedCall`: a queue of events — the backend's
 * server→client requests (`input`: elicitation, sampling, roots) and finally its answer
 * (`final`, already in 2026-07-28 shape, response policies applied). The bridge consumes the
 * queue itself until the first `input` event; then:
 * - without an `InputBroker`, it refuses the backend's request (JSON-RPC error, the client
 *   cannot be asked) and keeps waiting for the final answer;
 * - with one, it calls `broker.takeOver(call, input)` and answers the client's HTTP request with
 *   what that returns (an `InputRequiredResult`); from then on the broker owns the call: it reads
 *   further events with `call.next()`, answers the backend with `call.answer()`, and cancels it
 *   with `call.cancel()` when the client never comes back.
 * A client request (a retry carrying `inputResponses`/`requestState`) is offered to
 * `broker.intercept` after the client policies approved it and before it is bridged; a response
 * there is the client's answer, `undefined` bridges it as a new request.
 * The backend is initialized with `broker.capabilities` (the input kinds the broker can carry);
 * without a broker Moat declares none, so a 2025 server never asks for input it cannot get.
 */
import type { Identity } from '../../../mcp/identity.js';
import {
  RPC,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../mcp/jsonrpc.js';

/** A server→client request the backend sent while a bridged request was in flight. */
export interface BackendInputRequest {
  /** The backend's id for the request: answer it with `BridgedCall.answer(id, …)`. */
  id: JsonRpcId;
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  params: Record<string, unknown>;
}

export type BridgeEvent =
  | { kind: 'input'; input: BackendInputRequest }
  /** The backend's answer in 2026-07-28 shape (`resultType` added), response policies applied. */
  | { kind: 'final'; response: JsonRpcResponse };

export interface BridgedCall {
  /** The client's request as it sent it (2026-07-28 shape), after the client policies. */
  readonly request: JsonRpcRequest;
  readonly identity: Identity;
  /** `_meta` `io.modelcontextprotocol/clientCapabilities` of the request (empty when absent). */
  readonly clientCapabilities: Record<string, unknown>;
  /** The next event; after `final` no more come. */
  next(): Promise<BridgeEvent>;
  /** Answers a backend input request (result, or error). */
  answer(id: JsonRpcId, answer: { result: Record<string, unknown> } | { error: JsonRpcError }): void;
  /** Gives up on the call: the backend request is cancelled, `next()` yields an error `final`. */
  cancel(reason: string): void;
  /**
   * The call waits for the client's retry (true) or works again (false). A shared stdio server
   * says nothing about which request its input requests belong to, so a call parked here must not
   * make the server's requests for other clients' calls ambiguous.
   */
  waitForClient?(waiting: boolean): void;
}

export interface InputBroker {
  /** Client capabilities the backend session announces: the input kinds the broker can carry. */
  readonly capabilities: Record<string, unknown>;
  /** Takes over a call at its first input request; returns the answer for the client's HTTP request. */
  takeOver(call: BridgedCall, first: BackendInputRequest): Promise<JsonRpcResponse>;
  /** A client request that continues an earlier call (a retry): its answer, or undefined to bridge it. */
  intercept?(request: JsonRpcRequest, identity: Identity): Promise<JsonRpcResponse | undefined>;
  /**
   * A 2026 server's own `requestState`, sealed for `identity` and `request` (a server many users
   * share cannot tell them apart).
   */
  sealServerState?(state: string, request: JsonRpcRequest, identity: Identity): Promise<string>;
  /** The retry with the server's own state back in place of the seal; refuses a foreign or changed seal. */
  openServerState?(request: JsonRpcRequest, identity: Identity): Promise<JsonRpcRequest>;
}

/** The client capability each input kind needs. */
const REQUIRED_CAPABILITY: Record<BackendInputRequest['method'], string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};
const INPUT_METHODS = new Set(Object.keys(REQUIRED_CAPABILITY));

/** The backend request as an input request, when it is one of the kinds MRTR carries. */
export function asInputRequest(request: JsonRpcRequest): BackendInputRequest | undefined {
  if (!INPUT_METHODS.has(request.method)) return undefined;
  return {
    id: request.id,
    method: request.method as BackendInputRequest['method'],
    params: request.params ?? {},
  };
}

/** An unbounded single-consumer queue of call events (each transport pushes, one reader pulls). */
export class CallEvents {
  readonly #queue: BridgeEvent[] = [];
  #waiting?: (event: BridgeEvent) => void;
  #ended = false;

  push(event: BridgeEvent): void {
    if (this.#ended) return;
    if (event.kind === 'final') this.#ended = true;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting(event);
    } else this.#queue.push(event);
  }

  get ended(): boolean {
    return this.#ended;
  }

  next(): Promise<BridgeEvent> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => (this.#waiting = resolve));
  }
}

/**
 * The call events and answer bookkeeping both transports share; a transport adds how to answer
 * the backend's input requests and how to cancel the backend request.
 */
export abstract class QueuedCall implements BridgedCall {
  readonly events = new CallEvents();
  readonly clientCapabilities: Record<string, unknown>;
  /** A broker owns the call: the client's HTTP request no longer cancels it. */
  takenOver = false;
  /** The HTTP status of an error final answer (504 on timeout, 502 for a broken backend). */
  httpStatus?: number;

  constructor(
    readonly request: JsonRpcRequest,
    readonly identity: Identity,
    clientCapabilities: Record<string, unknown>,
  ) {
    this.clientCapabilities = clientCapabilities;
  }

  next(): Promise<BridgeEvent> {
    return this.events.next();
  }

  abstract answer(id: JsonRpcId, answer: { result: Record<string, unknown> } | { error: JsonRpcError }): void;
  abstract cancel(reason: string): void;

  /** The call ends with an error for the client. */
  fail(error: JsonRpcError, httpStatus: number): void {
    if (this.events.ended) return;
    this.httpStatus = httpStatus;
    this.events.push({ kind: 'final', response: { jsonrpc: '2.0', id: this.request.id, error } });
  }

  /**
   * Runs the call until its answer for the client's HTTP request: the final answer, or (at the
   * first input request) what the broker answers; without a broker input requests are refused.
   */
  async settle(broker: InputBroker | undefined): Promise<JsonRpcResponse> {
    for (;;) {
      const event = await this.next();
      if (event.kind === 'final') return event.response;
      // A broker decides per input request (an undeclared kind is refused to the server alone,
      // and the call goes on with what the client can answer: the suite's capability-check).
      if (broker) {
        this.takenOver = true;
        return broker.takeOver(this, event.input);
      }
      const needed = REQUIRED_CAPABILITY[event.input.method];
      if (!(needed in this.clientCapabilities)) return this.#undeclared(event.input, needed);
      this.answer(event.input.id, {
        error: {
          code: RPC.methodNotFound,
          message: `Moat cannot carry ${event.input.method} to a 2026-07-28 client on this proxy`,
        },
      });
    }
  }

  /**
   * The server asked for input the client did not declare: never asked of the client. The server
   * gets an error, its request is cancelled, and the client gets -32021 (HTTP 400) naming it.
   */
  #undeclared(input: BackendInputRequest, capability: string): JsonRpcResponse {
    this.answer(input.id, {
      error: { code: RPC.methodNotFound, message: `The client did not declare the ${capability} capability` },
    });
    this.cancel(`the client did not declare the ${capability} capability`);
    this.httpStatus = 400;
    return {
      jsonrpc: '2.0',
      id: this.request.id,
      error: {
        code: RPC.missingClientCapability,
        message: `Missing required client capability: ${capability}`,
        data: { requiredCapabilities: { [capability]: {} } },
      },
    };
  }
}
