/**
 * Message policies: what every concern that decides about MCP messages (tool filter, webhooks,
 * authorization) implements, and the runner that chains them. Policies see JSON-RPC messages and
 * who sent them, never HTTP or SSE framing, so a policy works the same over every transport. A
 * verdict says what happened; the edge decides how to say it on the wire.
 */
import type { ClientTransportKind, ExchangeRecord } from './exchange.js';

export type { ClientTransportKind } from './exchange.js';
import type { Identity } from './identity.js';
import type {
  JsonRpcError,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from './jsonrpc.js';

export interface MessageContext {
  /** Client-facing session ID, when the message belongs to a session. */
  sessionId?: string;
  identity: Identity;
  /** The workload name (used by authz, audit and webhooks). */
  serverName: string;
  transport: ClientTransportKind;
  clientAddress: string;
  /** Request metadata as received, lower-case names (read-only; e.g. for webhooks' context). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client exchange this message belongs to, where observers collect what happened. */
  exchange?: ExchangeRecord;
}

/**
 * Why a policy refused a message:
 * - `forbidden`: the caller may not do this (authorization, a webhook's denial);
 * - `invalid`: the message lacks what the policy needs to decide (e.g. a tool name);
 * - `unprocessable`: a policy service declared the message unprocessable (a webhook's HTTP 422);
 * - `not-found`: answered as the server itself would answer for something it does not have
 *   (a hidden tool), so clients report a failed call rather than a transport failure;
 * - `policy-error`: the policy could not decide and fails closed (a webhook that is down);
 * - `rate-limited`: the caller sent too much; `error.data.retryAfter` says when to try again;
 * - `unavailable`: a store the policy needs is down (e.g. the rate limit's Redis); try later.
 */
export type DenialReason =
  'forbidden' | 'invalid' | 'unprocessable' | 'not-found' | 'policy-error' | 'rate-limited' | 'unavailable';

/** What a policy decides about a message coming from the client. */
export type ClientVerdict =
  | { action: 'allow' }
  | { action: 'rewrite'; message: JsonRpcMessage }
  | { action: 'deny'; reason: DenialReason; error: JsonRpcError };

/** Allows a message, client's or server's. */
export const ALLOW: { readonly action: 'allow' } = Object.freeze({ action: 'allow' });

/** A message the server sends of its own accord: its request to the client, or a notification. */
export type ServerOriginated = JsonRpcRequest | JsonRpcNotification;

/**
 * What a policy decides about a server-originated message. `deny`: the client never sees it; a
 * request is answered to the server with `error` instead, a notification is dropped.
 */
export type ServerMessageVerdict =
  | { action: 'allow' }
  | { action: 'rewrite'; message: ServerOriginated }
  | { action: 'deny'; error: JsonRpcError };

/**
 * A message policy. Every hook is optional; a chain with no policies lets bytes pass without a
 * JSON parse. Hooks run in order for client messages and in reverse order for server responses.
 */
export interface MessagePolicy {
  readonly name: string;
  /** A message from the client (request, notification, or a response to a server request). */
  onClientMessage?(message: JsonRpcMessage, ctx: MessageContext): ClientVerdict | Promise<ClientVerdict>;
  /** The server's response to a client request (e.g. filter or rename tools in tools/list). */
  onServerResponse?(
    response: JsonRpcResponse,
    request: JsonRpcRequest,
    ctx: MessageContext,
  ): JsonRpcResponse | Promise<JsonRpcResponse>;
  /**
   * Which server responses onServerResponse needs, judged from the request's method and the
   * answer's raw text before it is parsed; absent: all of them. Answers no policy needs pass
   * through unparsed. A screen (see ResponseNeed): it may see several SSE events at once, so it
   * looks for markers and never parses.
   */
  needsResponse?(method: string, text: string | Buffer): boolean;
  /**
   * A message the server originates (sampling and elicitation requests, log and progress
   * notifications), on every stream that carries one. Synchronous, so server messages keep their
   * order and a transport delivers them in the tick they arrive. `ctx`: the client exchange the
   * message goes out in, when there is one (a stdio server's message may reach a session's stream
   * while none of its requests is in flight).
   */
  onServerMessage?(message: ServerOriginated, ctx: MessageContext | undefined): ServerMessageVerdict;
  /**
   * Acts on 2026-07-28 (stateless) requests only: a transport that tells the eras apart per
   * request leaves it out for 2025-era ones, so a chain of such policies costs those nothing.
   */
  readonly statelessOnly?: boolean;
}

/** The outcome of a whole chain: the message to forward, or the first denial and who made it. */
export type ChainVerdict =
  | { action: 'forward'; message: JsonRpcMessage; rewritten: boolean }
  | { action: 'deny'; reason: DenialReason; error: JsonRpcError; policy: string };

/**
 * Runs the chain over a client message. Synchronous while every policy answers synchronously (the
 * usual case: tool filter, Cedar, header checks), so a message costs no promise hops; from the
 * first policy that answers with a promise on, the rest of the chain runs after it settles.
 */
export function runClientPolicies(
  policies: readonly MessagePolicy[],
  message: JsonRpcMessage,
  ctx: MessageContext,
): ChainVerdict | Promise<ChainVerdict> {
  return runFrom(policies, 0, message, message, ctx);
}

function runFrom(
  policies: readonly MessagePolicy[],
  from: number,
  received: JsonRpcMessage,
  current: JsonRpcMessage,
  ctx: MessageContext,
): ChainVerdict | Promise<ChainVerdict> {
  for (let i = from; i < policies.length; i++) {
    const policy = policies[i] as MessagePolicy;
    if (!policy.onClientMessage) continue;
    const answer = policy.onClientMessage(current, ctx);
    if ('then' in answer) {
      const seen = current;
      return answer.then((verdict) =>
        verdict.action === 'deny'
          ? { ...verdict, policy: policy.name }
          : runFrom(policies, i + 1, received, verdict.action === 'rewrite' ? verdict.message : seen, ctx),
      );
    }
    if (answer.action === 'deny') return { ...answer, policy: policy.name };
    if (answer.action === 'rewrite') current = answer.message;
  }
  return { action: 'forward', message: current, rewritten: current !== received };
}

export async function runServerPolicies(
  policies: readonly MessagePolicy[],
  response: JsonRpcResponse,
  request: JsonRpcRequest,
  ctx: MessageContext,
): Promise<JsonRpcResponse> {
  let current = response;
  for (let i = policies.length - 1; i >= 0; i--) {
    const policy = policies[i];
    if (policy?.onServerResponse) current = await policy.onServerResponse(current, request, ctx);
  }
  return current;
}

/**
 * Runs the chain over a server-originated message, bottom to top as for answers: the message to
 * pass on, or the first denial and who made it.
 */
export function runServerMessagePolicies(
  policies: readonly MessagePolicy[],
  message: ServerOriginated,
  ctx: MessageContext | undefined,
):
  { action: 'forward'; message: ServerOriginated } | { action: 'deny'; error: JsonRpcError; policy: string } {
  let current = message;
  for (let i = policies.length - 1; i >= 0; i--) {
    const policy = policies[i];
    if (!policy?.onServerMessage) continue;
    const verdict = policy.onServerMessage(current, ctx);
    if (verdict.action === 'deny') return { action: 'deny', error: verdict.error, policy: policy.name };
    if (verdict.action === 'rewrite') current = verdict.message;
  }
  return { action: 'forward', message: current };
}

/**
 * A server-originated message through the chain: the message to pass on, or undefined when a
 * policy refused it; a refused request is then answered through `answerServer` with the refusal
 * (the server must not wait for an answer that never comes), a refused notification dropped.
 */
export function screenServerMessage(
  policies: readonly MessagePolicy[],
  message: ServerOriginated,
  ctx: MessageContext | undefined,
  answerServer: ((answer: JsonRpcResponse) => void) | undefined,
): ServerOriginated | undefined {
  const verdict = runServerMessagePolicies(policies, message, ctx);
  if (verdict.action === 'forward') return verdict.message;
  if ('id' in message) answerServer?.({ jsonrpc: '2.0', id: message.id, error: verdict.error });
  return undefined;
}

/** True when any policy wants to see server responses or server-originated messages (so they must be parsed). */
export function inspectsResponses(policies: readonly MessagePolicy[]): boolean {
  return policies.some((p) => p.onServerResponse !== undefined || p.onServerMessage !== undefined);
}

/** True when any policy screens server-originated messages. */
export function inspectsServerMessages(policies: readonly MessagePolicy[]): boolean {
  return policies.some((p) => p.onServerMessage !== undefined);
}

/**
 * The raw text may hold a server-originated message (a `"method"` member, or `\u` escapes that
 * may spell one): a screen like needsResponse's, never a parse.
 */
export function mayHoldServerMessage(text: string | Buffer): boolean {
  return text.indexOf('"method"') !== -1 || text.indexOf('\\u') !== -1;
}

/**
 * True when some policy needs this answer (to a `method` request) parsed. A loop rather than
 * some() with an arrow: it runs for every answer (and SSE chunk), and the arrow would be a new
 * closure each time.
 */
export function needsResponse(
  policies: readonly MessagePolicy[],
  method: string,
  text: string | Buffer,
): boolean {
  for (const policy of policies) {
    // The answer's stream may carry the server's own messages too (a POST's SSE, JSON lines).
    if (policy.onServerMessage !== undefined && mayHoldServerMessage(text)) return true;
    if (policy.onServerResponse === undefined) continue;
    if (policy.needsResponse === undefined || policy.needsResponse(method, text)) return true;
  }
  return false;
}
