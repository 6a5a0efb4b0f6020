/**
 * Runs a chain of message policies: client messages through every policy in order (stopping at
 * the first rejection), server responses through them in reverse order.
 */
import type {
  ClientVerdict,
  JsonRpcMessage,
  JsonRpcRequest,
  JsonRpcResponse,
  MessageContext,
  MessagePolicy,
} from '../types.js';

/** A client verdict that also names the policy that refused the message. */
export type PipelineVerdict =
  | { action: 'forward'; message: JsonRpcMessage }
  | (Extract<ClientVerdict, { action: 'reject' }> & { policy: string });

export async function runClientPolicies(
  policies: readonly MessagePolicy[],
  message: JsonRpcMessage,
  ctx: MessageContext,
): Promise<PipelineVerdict> {
  let current = message;
  for (const policy of policies) {
    if (!policy.onClientMessage) continue;
    const verdict = await policy.onClientMessage(current, ctx);
    if (verdict.action === 'reject') return { ...verdict, policy: policy.name };
    current = verdict.message;
  }
  return { action: 'forward', message: current };
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

/** True when any policy wants to see server responses (so responses must be parsed). */
export function inspectsResponses(policies: readonly MessagePolicy[]): boolean {
  return policies.some((p) => p.onServerResponse !== undefined);
}
