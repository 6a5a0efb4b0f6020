/**
 * The one place a client message meets the policy chain, for every transport: the message
 * context policies see, and the chain's verdict turned into what the edge answers (a denial
 * becomes a ProxyRejection with the HTTP status its reason maps to, recorded the same way for
 * audit whichever transport carried it).
 */
import { isRequest, type JsonRpcError, type JsonRpcMessage } from '../../mcp/jsonrpc.js';
import {
  runClientPolicies,
  type ChainVerdict,
  type ClientTransportKind,
  type DenialReason,
  type MessageContext,
  type MessagePolicy,
} from '../../mcp/policy.js';
import type { EdgeRequest } from '../types.js';
import { ProxyRejection } from './errors.js';

/** How each kind of denial is said over HTTP. */
export const DENIAL_STATUS: Record<DenialReason, number> = {
  forbidden: 403,
  invalid: 400,
  unprocessable: 422,
  // As the server would answer for a tool it does not have: a JSON-RPC error in a 200.
  'not-found': 200,
  'policy-error': 500,
  'rate-limited': 429,
  unavailable: 503,
};

/** Retry-After for a rate-limit refusal, from the `retryAfter` (seconds) its error data carries. */
function retryAfterHeader(error: JsonRpcError): Record<string, string> {
  const data = error.data as { retryAfter?: unknown } | undefined;
  return typeof data?.retryAfter === 'number' ? { 'retry-after': String(data.retryAfter) } : {};
}

export function messageContext(
  request: EdgeRequest,
  serverName: string,
  transport: ClientTransportKind,
  sessionId?: string,
): MessageContext {
  // One shape for every message (sessionId present or not), built without a spread.
  return {
    sessionId,
    identity: request.identity,
    serverName,
    transport,
    clientAddress: request.clientAddress,
    headers: request.req.headers,
    exchange: request.annotations,
  };
}

type Approved = { message: JsonRpcMessage; rewritten: boolean };

/**
 * What to send on after the client policies; a denial throws a ProxyRejection. Synchronous when
 * every policy decides synchronously (see runClientPolicies), so callers' `await` costs one tick.
 */
export function applyClientPolicies(
  policies: readonly MessagePolicy[],
  message: JsonRpcMessage,
  ctx: MessageContext,
  request: EdgeRequest,
): Approved | Promise<Approved> {
  if (policies.length === 0) return { message, rewritten: false };
  const verdict = runClientPolicies(policies, message, ctx);
  return 'then' in verdict
    ? verdict.then((settled) => approved(settled, message, request))
    : approved(verdict, message, request);
}

function approved(verdict: ChainVerdict, message: JsonRpcMessage, request: EdgeRequest): Approved {
  if (verdict.action === 'forward') return verdict;
  request.annotations.deniedBy = verdict.policy;
  request.annotations.rpcErrorCode = verdict.error.code;
  const awaitsAnswer = isRequest(message);
  // Only a request has a caller waiting for a JSON-RPC answer "as the server would give it";
  // any other refused message (a notification, a response) must fail at the HTTP level.
  const status = DENIAL_STATUS[verdict.reason];
  throw new ProxyRejection(awaitsAnswer || status >= 400 ? status : 403, verdict.error, {
    id: awaitsAnswer ? message.id : null,
    ...(verdict.reason === 'rate-limited' ? { headers: retryAfterHeader(verdict.error) } : {}),
  });
}
