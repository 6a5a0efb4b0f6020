/**
 * Multi round-trip requests (2026-07-28 `input_required`) for a 2025-era client: each input
 * request the backend embeds becomes a server→client request on the stream of the client's POST
 * (elicitation, sampling, roots, only of kinds the client declared at `initialize`); the client's
 * answers become the retry's `inputResponses`. The client POSTs each answer as a JSON-RPC response
 * to the proxy; when it lands on another replica than the one that asked (no sticky sessions,
 * Redis session store), that replica hands it over through the MRTR relay (eras/rounds/relay.ts). Every
 * wait is bounded by the upstream timeout; an answer no replica waits for is refused.
 */
import { randomUUID } from 'node:crypto';
import { RPC, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import { runServerMessagePolicies, type MessageContext, type MessagePolicy } from '../../../mcp/policy.js';
import { errorMessage } from '../../../util/errors.js';
import type { RoundRelay } from '../rounds/relay.js';
import type { ClientFacts } from './wire.js';
import { isObject } from '../../../util/is-object.js';

/** Rounds one client request may take before the proxy gives up (the backend keeps asking). */
export const MAX_INPUT_ROUNDS = 8;

/** Which declared client capability each kind of input request needs. */
const CAPABILITY_FOR: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

export class InputRoundError extends Error {
  constructor(
    message: string,
    readonly code: number = RPC.internalError,
  ) {
    super(message);
    this.name = 'InputRoundError';
  }
}

interface Waiting {
  sessionId: string;
  resolve(response: JsonRpcResponse): void;
}

/** What a replica that got a client's answer hands the replica that asked (eras/rounds/relay.ts). */
interface HandedAnswer {
  response: JsonRpcResponse;
}

/** Ids of the server→client requests the proxy makes; any other id answers nothing of ours. */
const ASK_ID_PREFIX = 'moat-input-';

/** The relay channel of one question: bound to its session, so another session's answer finds no one. */
const channelOf = (sessionId: string, id: string): string => `answer:${sessionId}:${id}`;

const ACK: JsonRpcResponse = { jsonrpc: '2.0', id: null, result: {} };

/**
 * The server→client requests this process sent and waits on, by the id it gave them. With a
 * relay (Redis), each question is also listened for across replicas while it waits, so the
 * client's answer may land on any replica of the workload.
 */
export class PendingClientAnswers {
  readonly #waiting = new Map<JsonRpcId, Waiting>();
  readonly #relay: () => Promise<RoundRelay | undefined>;

  constructor(relay: () => Promise<RoundRelay | undefined> = () => Promise.resolve(undefined)) {
    this.#relay = relay;
  }

  /** Sends a request through `send` and waits for its answer (bounded by `signal`). */
  async ask(
    sessionId: string,
    method: string,
    params: unknown,
    send: (request: JsonRpcRequest) => boolean,
    signal: AbortSignal,
  ): Promise<JsonRpcResponse> {
    const id = `${ASK_ID_PREFIX}${randomUUID()}`;
    const channel = channelOf(sessionId, id);
    const answer = this.#wait(id, sessionId, signal);
    answer.catch(() => {}); // awaited below; a rejection while listening is not unhandled
    let relay: RoundRelay | undefined;
    try {
      try {
        relay = await this.#relay();
        // Listening before the question is out: its answer cannot outrun the listener.
        await relay?.listen<HandedAnswer>(channel, ({ response }) =>
          Promise.resolve(this.answer(sessionId, response) ? ACK : notWaiting(response.id)),
        );
      } catch (err) {
        throw new InputRoundError(
          `The question could not be shared with the other proxy replicas: ${errorMessage(err)}`,
        );
      }
      const request: JsonRpcRequest = { jsonrpc: '2.0', id, method };
      if (typeof params === 'object' && params !== null) request.params = params as Record<string, unknown>;
      if (!send(request)) throw new InputRoundError('the client closed the stream the question was asked on');
      return await answer;
    } finally {
      this.#waiting.delete(id);
      relay?.stop(channel);
    }
  }

  #wait(id: string, sessionId: string, signal: AbortSignal): Promise<JsonRpcResponse> {
    return new Promise((resolve, rejectAsk) => {
      const stop = (): void => {
        this.#waiting.delete(id);
        rejectAsk(
          signal.reason instanceof Error
            ? signal.reason
            : new InputRoundError('the client did not answer in time'),
        );
      };
      if (signal.aborted) return stop();
      signal.addEventListener('abort', stop, { once: true });
      this.#waiting.set(id, {
        sessionId,
        resolve: (response) => {
          signal.removeEventListener('abort', stop);
          this.#waiting.delete(id);
          resolve(response);
        },
      });
    });
  }

  /** Hands the client's answer to the request waiting for it; false when none waits here. */
  answer(sessionId: string, response: JsonRpcResponse): boolean {
    const waiting = response.id === null ? undefined : this.#waiting.get(response.id);
    if (!waiting || waiting.sessionId !== sessionId) return false;
    waiting.resolve(response);
    return true;
  }

  /**
   * Hands the client's answer to the request waiting for it, here or on the replica that asked
   * (bounded by `timeoutMs`); false when no request of the session waits for it anywhere.
   */
  async deliver(sessionId: string, response: JsonRpcResponse, timeoutMs: number): Promise<boolean> {
    if (this.answer(sessionId, response)) return true;
    if (typeof response.id !== 'string' || !response.id.startsWith(ASK_ID_PREFIX)) return false;
    const relay = await this.#relay();
    const ack = await relay?.forward<HandedAnswer>(
      channelOf(sessionId, response.id),
      { response },
      timeoutMs,
    );
    return ack !== undefined && ack.error === undefined;
  }
}

function notWaiting(id: JsonRpcId | null): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id: null,
    error: { code: RPC.invalidRequest, message: `no request waits for the answer ${String(id)}` },
  };
}

/** The server-message policies (guardrails) an input request passes before the client is asked. */
export interface AskScreen {
  policies: readonly MessagePolicy[];
  ctx: MessageContext;
}

/**
 * Asks the client every input request of an `input_required` result, in parallel, and returns
 * the `inputResponses` for the retry. Refuses kinds the client did not declare; each request
 * passes `screen` first, as a server request would (one refused ends the call with the refusal).
 */
export async function askClient(
  inputRequests: unknown,
  facts: ClientFacts,
  ask: (method: string, params: unknown) => Promise<JsonRpcResponse>,
  screen?: AskScreen,
): Promise<Record<string, unknown>> {
  if (!isObject(inputRequests)) return {};
  const entries = Object.entries(inputRequests).map(([key, entry]) => {
    if (!isObject(entry) || typeof entry.method !== 'string' || CAPABILITY_FOR[entry.method] === undefined) {
      throw new InputRoundError(`The MCP server asked for input of an unknown kind (${key})`);
    }
    const capability = CAPABILITY_FOR[entry.method] as string;
    if (!isObject(facts.capabilities[capability])) {
      throw new InputRoundError(
        `The MCP server asked for ${entry.method}, which this client did not declare (capability "${capability}")`,
        RPC.missingClientCapability,
      );
    }
    if (!screen) return { key, method: entry.method, params: entry.params };
    const asked = {
      jsonrpc: '2.0' as const,
      method: entry.method,
      ...(isObject(entry.params) && { params: entry.params }),
    };
    const verdict = runServerMessagePolicies(screen.policies, asked, screen.ctx);
    if (verdict.action === 'deny') throw new InputRoundError(verdict.error.message, verdict.error.code);
    return { key, method: entry.method, params: verdict.message.params ?? entry.params };
  });
  const answers = await Promise.all(
    entries.map(async ({ key, method, params }) => {
      const response = await ask(method, params);
      if (response.error)
        throw new InputRoundError(`The client refused ${method}: ${response.error.message}`);
      return [key, response.result] as const;
    }),
  );
  return Object.fromEntries(answers);
}

/**
 * The retry of `request` after an `input_required` round: the client's answers as
 * `inputResponses`, and the round's `requestState` unchanged (when it had one).
 */
export function retryRequest(
  request: JsonRpcRequest,
  round: { requestState?: unknown },
  inputResponses: Record<string, unknown>,
): JsonRpcRequest {
  const { inputResponses: _old, requestState: _oldState, ...params } = request.params ?? {};
  return {
    ...request,
    params: {
      ...params,
      inputResponses,
      ...(typeof round.requestState === 'string' ? { requestState: round.requestState } : {}),
    },
  };
}
