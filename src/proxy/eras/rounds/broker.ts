/**
 * Multi round-trip requests (MRTR) for bridged calls: the InputBroker of eras/down/seam.ts. When a
 * 2025-era backend asks for input during a 2026-07-28 client's `tools/call`, `prompts/get` or
 * `resources/read`, the client gets an InputRequiredResult with a sealed `requestState`
 * (state.ts) while the backend's request stays open here. The client's retry (offered to
 * `intercept` after the client policies approved it, like any new request) must carry a state
 * this proxy sealed, for this principal and this very request, not expired and never used before;
 * its input responses then answer the backend's waiting requests, and the client gets the next
 * round or the final result. A retry on another replica is handed to the holder (relay.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Identity } from '../../../mcp/identity.js';
import { RPC, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import { errorMessage } from '../../../util/errors.js';
import type { BackendInputRequest, BridgedCall, InputBroker } from '../down/seam.js';
import { clientCapabilitiesOf } from '../down/translate.js';
import { ProxyRejection, reject } from '../../pipeline/errors.js';
import { principalOf } from '../../sessions/binding.js';
import { Flight, type RoundOutcome } from './flight.js';
import { CARRIED_CAPABILITIES } from './inputs.js';
import type { RetryInputs, RoundRelay } from './relay.js';
import type { SingleUse } from './single-use.js';
import {
  MAX_STATE_CHARS,
  REFUSAL_TEXT,
  requestDigest,
  type RequestStateCodec,
  type StateRefusal,
} from './state.js';
import { isObject } from '../../../util/is-object.js';

/** Requests whose answer may be an InputRequiredResult (2026-07-28). */
const MRTR_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** Most rounds one process holds open for clients at once (each holds a server request open). */
const MAX_HELD_ROUNDS = 10_000;

/** The `deniedBy` audit events name for a refused request state. */
export const STATE_POLICY = 'request-state';

/** Where states are sealed and consumed, and how rounds reach other replicas. */
export interface StateBacking {
  codec: RequestStateCodec;
  singleUse: SingleUse;
  /** Hands retries between replicas (Redis); absent: rounds live in this process only. */
  relay?: RoundRelay;
}

export interface MrtrBrokerOptions {
  /** The backing, made on first use (with Redis it connects: a proxy that never bridges never does). */
  backing: () => Promise<StateBacking>;
  /** How long a client has to retry (the state's lifetime). */
  ttlMs: number;
  /** How long a retry waits for the backend's next round or answer (the upstream timeout). */
  timeoutMs: number;
  logger: Logger;
  now?: () => number;
}

interface Held {
  flight: Flight;
  timer: NodeJS.Timeout;
}

type Refusal = StateRefusal | 'replayed' | 'gone' | 'bad-responses';

const REFUSALS: Record<Refusal, string> = {
  ...REFUSAL_TEXT,
  replayed: 'params.requestState was already used; each state is good for one retry',
  gone: 'the request params.requestState continues is no longer in progress (it ended, or its proxy went away); send the request again without requestState and inputResponses',
  'bad-responses': 'params.inputResponses must be an object mapping input request keys to their results',
};

function principalKey(identity: Identity): string {
  return principalOf(identity) ?? '';
}

/**
 * The answer for the client's request `id`. A missing capability is refused with HTTP 400, as a
 * 2026-07-28 server refuses it; everything else is a JSON-RPC answer in a 200.
 */
function delivered(answer: JsonRpcResponse, id: JsonRpcId): JsonRpcResponse {
  if (answer.error?.code === RPC.missingClientCapability) throw new ProxyRejection(400, answer.error, { id });
  return { ...answer, id };
}

/** A call to the shared state store (Redis): its failure is a 503, never a 500. */
async function storeCall<T>(work: Promise<T> | undefined): Promise<T | undefined> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof ProxyRejection) throw err;
    throw reject(503, RPC.serverError, `The request state store is unavailable: ${errorMessage(err)}`);
  }
}

export class MrtrBroker implements InputBroker {
  readonly capabilities = CARRIED_CAPABILITIES;
  readonly #options: MrtrBrokerOptions;
  readonly #now: () => number;
  /** Rounds waiting for the client's retry, held by this process, by round id. */
  readonly #held = new Map<string, Held>();
  /** The relay, once the backing is made (rounds are held only after that). */
  #relay: RoundRelay | undefined;

  constructor(options: MrtrBrokerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async takeOver(call: BridgedCall, first: BackendInputRequest): Promise<JsonRpcResponse> {
    const { request } = call;
    const flight = new Flight(
      call,
      principalKey(call.identity),
      requestDigest(request.method, request.params),
    );
    const answer = await this.#answer(flight, await this.#bounded(flight, flight.firstRound(first)));
    return delivered(answer, request.id);
  }

  async intercept(request: JsonRpcRequest, identity: Identity): Promise<JsonRpcResponse | undefined> {
    if (!MRTR_METHODS.has(request.method)) return undefined;
    const params = request.params ?? {};
    // Without a state this is a new request: input responses, if any, answer nothing asked yet.
    if (params.requestState === undefined) return undefined;
    const principal = principalKey(identity);
    const { codec, singleUse, relay } = await this.#options.backing();
    const opened = codec.open(params.requestState, {
      principal,
      digest: requestDigest(request.method, params),
    });
    if ('refusal' in opened) throw this.#refuse(opened.refusal, request, identity);
    const inputResponses = params.inputResponses ?? {};
    if (!isObject(inputResponses)) throw this.#refuse('bad-responses', request, identity);
    // A server's own state (openServerState) continues no round held here.
    if (opened.claims.server !== undefined) throw this.#refuse('malformed', request, identity);
    const { id, exp } = opened.claims;
    // Consumed only now: a retry a policy refused leaves the state usable until it expires.
    if (!(await storeCall(singleUse.consume(id, exp)))) throw this.#refuse('replayed', request, identity);
    const inputs: RetryInputs = { inputResponses, capabilities: clientCapabilitiesOf(request) };
    const answer = this.#held.has(id)
      ? await this.#resumeHeld(id, inputs)
      : await storeCall(relay?.forward(id, inputs, this.#options.timeoutMs));
    if (answer === undefined) throw this.#refuse('gone', request, identity);
    return delivered(answer, request.id);
  }

  async sealServerState(state: string, request: JsonRpcRequest, identity: Identity): Promise<string> {
    // Base64 grows 4/3 and the seal adds its own claims: refuse what could not be opened again.
    if (state.length > (MAX_STATE_CHARS * 3) / 4 - 512) {
      throw reject(502, RPC.serverError, 'The MCP server sent a requestState too large to carry');
    }
    const { codec } = await this.#options.backing();
    return codec.seal({
      id: randomBytes(16).toString('base64url'),
      principal: principalKey(identity),
      exp: this.#now() + this.#options.ttlMs,
      digest: requestDigest(request.method, request.params),
      server: state,
    });
  }

  async openServerState(request: JsonRpcRequest, identity: Identity): Promise<JsonRpcRequest> {
    const params = request.params ?? {};
    const { codec, singleUse } = await this.#options.backing();
    const opened = codec.open(params.requestState, {
      principal: principalKey(identity),
      digest: requestDigest(request.method, params),
    });
    if ('refusal' in opened) throw this.#refuse(opened.refusal, request, identity);
    const { id, exp, server } = opened.claims;
    if (server === undefined) throw this.#refuse('malformed', request, identity);
    if (!(await storeCall(singleUse.consume(id, exp)))) throw this.#refuse('replayed', request, identity);
    return { ...request, params: { ...params, requestState: server } };
  }

  /** Stops holding every round (the proxy is closing): their backend requests are cancelled. */
  close(): void {
    for (const [id, held] of this.#held) this.#drop(id, held, 'the proxy is shutting down');
  }

  async #resumeHeld(id: string, inputs: RetryInputs): Promise<JsonRpcResponse> {
    const held = this.#held.get(id);
    if (!held) return this.#gone();
    clearTimeout(held.timer);
    this.#held.delete(id);
    this.#relay?.stop(id);
    held.flight.waitForClient(false);
    const outcome = await this.#bounded(
      held.flight,
      held.flight.resume(inputs.inputResponses, inputs.capabilities),
    );
    return this.#answer(held.flight, outcome);
  }

  /** The client's answer for a round: the final result, or an InputRequiredResult with a new state. */
  async #answer(flight: Flight, outcome: RoundOutcome): Promise<JsonRpcResponse> {
    const id = null;
    if (outcome.kind === 'final') return { ...outcome.response, id };
    if (outcome.kind === 'missing') {
      const names = Object.keys(outcome.requiredCapabilities).join(', ');
      return {
        jsonrpc: '2.0',
        id,
        error: {
          code: RPC.missingClientCapability,
          message: `Missing required client capability: ${names}`,
          data: { requiredCapabilities: outcome.requiredCapabilities },
        },
      };
    }
    const requestState = await this.#hold(flight);
    return {
      jsonrpc: '2.0',
      id,
      result: { resultType: 'input_required', inputRequests: outcome.inputRequests, requestState },
    };
  }

  /** Holds a flight for the client's retry; returns the sealed state naming it. */
  async #hold(flight: Flight): Promise<string> {
    if (this.#held.size >= MAX_HELD_ROUNDS) {
      flight.cancel('too many requests wait for input');
      throw reject(
        503,
        RPC.serverError,
        `Too many requests wait for input here (${MAX_HELD_ROUNDS}); try again later`,
      );
    }
    let backing: StateBacking;
    try {
      backing = await this.#options.backing();
    } catch (err) {
      flight.cancel('the request state store is unavailable');
      throw err;
    }
    const { codec, relay } = backing;
    this.#relay = relay;
    const id = randomBytes(16).toString('base64url');
    const exp = this.#now() + this.#options.ttlMs;
    const held: Held = {
      flight,
      timer: setTimeout(
        () => this.#drop(id, held, 'the client did not answer within the request state TTL'),
        this.#options.ttlMs,
      ),
    };
    held.timer.unref();
    this.#held.set(id, held);
    flight.waitForClient(true);
    try {
      await storeCall(relay?.listen(id, (inputs) => this.#resumeHeld(id, inputs)));
    } catch (err) {
      this.#drop(id, held, 'its round could not be shared with the other replicas');
      throw err;
    }
    return codec.seal({ id, principal: flight.principal, exp, digest: flight.digest });
  }

  #drop(id: string, held: Held, reason: string): void {
    if (this.#held.get(id) !== held) return;
    clearTimeout(held.timer);
    this.#held.delete(id);
    this.#relay?.stop(id);
    held.flight.cancel(reason);
  }

  /** A round's outcome, or an error answer when the backend takes longer than the upstream timeout. */
  async #bounded(flight: Flight, round: Promise<RoundOutcome>): Promise<RoundOutcome> {
    const ms = this.#options.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<RoundOutcome>((resolve) => {
      timer = setTimeout(() => {
        flight.cancel('upstream timeout');
        resolve({
          kind: 'final',
          response: {
            jsonrpc: '2.0',
            id: null,
            error: {
              code: RPC.serverError,
              message: `Upstream timeout: the MCP backend did not answer within ${ms} ms`,
            },
          },
        });
      }, ms);
    });
    try {
      return await Promise.race([round, late]);
    } catch (err) {
      return {
        kind: 'final',
        response: {
          jsonrpc: '2.0',
          id: null,
          error: { code: RPC.internalError, message: errorMessage(err) },
        },
      };
    } finally {
      clearTimeout(timer);
    }
  }

  #gone(): JsonRpcResponse {
    return { jsonrpc: '2.0', id: null, error: { code: RPC.invalidParams, message: REFUSALS.gone } };
  }

  #refuse(refusal: Refusal, request: JsonRpcRequest, identity: Identity): ProxyRejection {
    const message = REFUSALS[refusal];
    this.#options.logger.warn(
      { method: request.method, refusal, subject: identity.local ? undefined : identity.subject },
      `request state refused: ${message}`,
    );
    return reject(400, RPC.invalidParams, message, {
      id: request.id,
      deniedBy: STATE_POLICY,
      data: { reason: refusal },
    });
  }
}
