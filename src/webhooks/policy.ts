/**
 * Webhook message policies. Mutating webhooks run first and may rewrite the request with a JSON
 * Patch under `/mcp_request/`; validating webhooks then see the final request and may refuse it.
 * Each webhook is asked in turn (config order). Outcomes:
 * - `allowed: false` → HTTP 403 with the webhook's message;
 * - the webhook answers HTTP 422 → always a denial (403; 422 for a mutating webhook);
 * - the call fails (timeout, network, non-200, bad answer) or the patch is unusable →
 *   `failure_policy: fail` refuses (validating 403, mutating 500), `ignore` lets the request on.
 */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../util/errors.js';
import { log } from '../util/log.js';
import { WEBHOOK_PROTOCOL_VERSION, WebhookCallError, type WebhookClient } from './client.js';
import { applyPatch, PatchError } from './json-patch.js';
import { toJsonRpcMessage, type JsonRpcMessage, RPC } from '../mcp/jsonrpc.js';
import {
  ALLOW,
  type ClientVerdict,
  type DenialReason,
  type MessageContext,
  type MessagePolicy,
} from '../mcp/policy.js';

/** JSON-RPC code of a webhook denial (ToolHive uses 403 too). */
export const WEBHOOK_DENIED_CODE = 403;

export function reviewRequest(message: JsonRpcMessage, ctx: MessageContext): Record<string, unknown> {
  const { identity } = ctx;
  return {
    version: WEBHOOK_PROTOCOL_VERSION,
    uid: randomUUID(),
    timestamp: new Date().toISOString(),
    principal: {
      sub: identity.subject,
      ...(identity.name ? { name: identity.name } : {}),
      ...(identity.email ? { email: identity.email } : {}),
      groups: identity.groups,
      claims: identity.claims,
    },
    mcp_request: message,
    context: { server_name: ctx.serverName, source_ip: ctx.clientAddress, transport: ctx.transport },
  };
}

const deny = (reason: DenialReason, code: number, message: string): ClientVerdict => ({
  action: 'deny',
  reason,
  error: { code, message },
});

export function createValidatingPolicy(hooks: readonly WebhookClient[]): MessagePolicy {
  return {
    name: 'validating-webhook',
    // Every shape is reviewed: requests, notifications and responses to server requests.
    async onClientMessage(message, ctx) {
      for (const hook of hooks) {
        try {
          const answer = await hook.call(reviewRequest(message, ctx));
          if (!answer.allowed)
            return deny('forbidden', WEBHOOK_DENIED_CODE, denialText(hook.name, answer.message));
        } catch (err) {
          if (err instanceof WebhookCallError && err.status === 422) {
            return deny('forbidden', WEBHOOK_DENIED_CODE, denialText(hook.name, undefined));
          }
          logFailure(hook, err);
          if (hook.failurePolicy === 'fail') {
            return deny(
              'forbidden',
              WEBHOOK_DENIED_CODE,
              `Request denied: validating webhook "${hook.name}" failed`,
            );
          }
        }
      }
      return ALLOW;
    },
  };
}

export function createMutatingPolicy(hooks: readonly WebhookClient[]): MessagePolicy {
  return {
    name: 'mutating-webhook',
    async onClientMessage(message, ctx) {
      let current: JsonRpcMessage = message;
      for (const hook of hooks) {
        const review = reviewRequest(current, ctx);
        try {
          const answer = await hook.call(review);
          if (!answer.allowed)
            return deny('forbidden', WEBHOOK_DENIED_CODE, denialText(hook.name, answer.message));
          if (answer.patch !== undefined && answer.patch !== null) {
            if (answer.patch_type !== undefined && answer.patch_type !== 'json_patch') {
              throw new PatchError(`unsupported patch_type ${JSON.stringify(answer.patch_type)}`);
            }
            current = patched(current, answer.patch);
          }
        } catch (err) {
          if (err instanceof WebhookCallError && err.status === 422) {
            return deny('unprocessable', WEBHOOK_DENIED_CODE, denialText(hook.name, undefined));
          }
          logFailure(hook, err);
          if (hook.failurePolicy === 'fail') {
            return deny(
              'policy-error',
              RPC.internalError,
              `Webhook error: mutating webhook "${hook.name}" failed`,
            );
          }
        }
      }
      return current === message ? ALLOW : { action: 'rewrite', message: current };
    },
  };
}

/** Applies the patch and checks the result is still the same JSON-RPC request. */
function patched(message: JsonRpcMessage, patch: unknown): JsonRpcMessage {
  const result = applyPatch({ mcp_request: message }, patch).mcp_request;
  let checked: JsonRpcMessage;
  try {
    checked = toJsonRpcMessage(result);
  } catch (err) {
    throw new PatchError(`the patched request is not valid JSON-RPC: ${errorMessage(err)}`);
  }
  const id = (m: JsonRpcMessage) => ('id' in m ? m.id : undefined);
  const kind = (m: JsonRpcMessage) => ('method' in m ? ('id' in m ? 'request' : 'notification') : 'response');
  if (id(checked) !== id(message) || kind(checked) !== kind(message)) {
    throw new PatchError(
      'a patch must not change the message id or its kind (request, notification, response)',
    );
  }
  return checked;
}

function denialText(name: string, message: string | undefined): string {
  return `Request denied by webhook "${name}"${message ? `: ${message}` : ''}`;
}

function logFailure(hook: WebhookClient, err: unknown): void {
  log().warn(
    { webhook: hook.name, failurePolicy: hook.failurePolicy, err: errorMessage(err) },
    hook.failurePolicy === 'fail' ? 'webhook failed; refusing the request' : 'webhook failed; ignoring it',
  );
}
