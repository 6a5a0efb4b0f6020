/**
 * The authorization message policy: one Cedar decision for every method that names a tool, prompt
 * or resource (tools/call, prompts/get, resources/read|subscribe|unsubscribe, and the `ref` of
 * completion/complete), denied as forbidden with a JSON-RPC error that says so (not "not found");
 * list answers (tools, prompts, resources, resource templates) keep only what the caller could
 * use, and a list answer this policy cannot read is replaced by an error (fail closed). Protocol
 * plumbing (initialize, ping, notifications, logging, tasks) passes; any other method is denied,
 * because a method we cannot classify is one we cannot authorize.
 */
import { log } from '../util/log.js';
import { errorMessage } from '../util/errors.js';
import type { AuthzRequest, CedarAuthorizer, Decision, Feature } from './cedar.js';
import { RPC, type JsonRpcResponse } from '../mcp/jsonrpc.js';
import { ALLOW, type ClientVerdict, type MessageContext, type MessagePolicy } from '../mcp/policy.js';
import { isObject } from '../util/is-object.js';
import { resolveMember, type MemberResolver } from '../mcp/members.js';

/** JSON-RPC code of a denial; ToolHive uses 403 too, so clients of either see the same. */
export const AUTHZ_DENIED_CODE = 403;

const CALLS: Record<string, { feature: Feature; key: 'name' | 'uri'; verb: string }> = {
  'tools/call': { feature: 'tool', key: 'name', verb: 'call tool' },
  'prompts/get': { feature: 'prompt', key: 'name', verb: 'get prompt' },
  'resources/read': { feature: 'resource', key: 'uri', verb: 'read resource' },
  'resources/subscribe': { feature: 'resource', key: 'uri', verb: 'subscribe to resource' },
  'resources/unsubscribe': { feature: 'resource', key: 'uri', verb: 'unsubscribe from resource' },
};

const LISTS: Record<
  string,
  {
    feature: Feature;
    field: 'tools' | 'prompts' | 'resources' | 'resourceTemplates';
    key: 'name' | 'uri' | 'uriTemplate';
  }
> = {
  'tools/list': { feature: 'tool', field: 'tools', key: 'name' },
  'prompts/list': { feature: 'prompt', field: 'prompts', key: 'name' },
  'resources/list': { feature: 'resource', field: 'resources', key: 'uri' },
  'resources/templates/list': { feature: 'resource', field: 'resourceTemplates', key: 'uriTemplate' },
};

/** completion/complete names what it completes in `ref`: a prompt, or a resource (template). */
const COMPLETION_REFS: Record<string, { feature: Feature; key: 'name' | 'uri' }> = {
  'ref/prompt': { feature: 'prompt', key: 'name' },
  'ref/resource': { feature: 'resource', key: 'uri' },
};

/** JSON-RPC internal error: the answer replacing a list this policy could not read. */
const UNREADABLE_LIST_CODE = -32603;

/** Methods that carry no tool, prompt or resource access of their own. */
const ALWAYS_ALLOWED = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'roots/list',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
]);

/** Tool annotations remembered from tools/list answers; bounded so a hostile server cannot grow it. */
const MAX_REMEMBERED_TOOLS = 10_000;

/**
 * `memberOf`: behind an aggregate endpoint, the member workload each name belongs to; each decision
 * (a call's, and each item's of a list answer) then has it as `context.backend`, and a call's is
 * recorded for observers (`exchange.backend`) as resolved on the message that leaves.
 */
export function createAuthzPolicy(authorizer: CedarAuthorizer, memberOf?: MemberResolver): MessagePolicy {
  const toolAnnotations = new Map<string, Record<string, unknown>>();
  const remember = (tool: Record<string, unknown>): void => {
    const { name, annotations } = tool;
    if (typeof name !== 'string' || typeof annotations !== 'object' || annotations === null) return;
    if (toolAnnotations.size >= MAX_REMEMBERED_TOOLS) toolAnnotations.clear();
    toolAnnotations.set(name, annotations as Record<string, unknown>);
  };
  const decide = (request: AuthzRequest): Decision => {
    try {
      return authorizer.authorize(request);
    } catch (err) {
      log().error(
        { err: errorMessage(err), feature: request.feature, id: request.id },
        'authorization failed; denying',
      );
      return { allowed: false, reasons: [] };
    }
  };
  const allowed = (request: AuthzRequest): boolean => decide(request).allowed;

  return {
    name: 'authz',
    onClientMessage(message, ctx): ClientVerdict {
      if (!('method' in message)) return ALLOW;
      const { method } = message;
      if (ALWAYS_ALLOWED.has(method) || method.startsWith('notifications/') || method in LISTS) {
        return ALLOW;
      }
      const named = resourceNamed(method, message.params);
      if ('verdict' in named) return named.verdict;
      const { feature, target, verb } = named;
      const args = message.params?.arguments;
      const request: AuthzRequest = {
        identity: ctx.identity,
        feature,
        id: target,
        arguments:
          typeof args === 'object' && args !== null && !Array.isArray(args)
            ? (args as Record<string, unknown>)
            : {},
        annotations: feature === 'tool' ? toolAnnotations.get(target) : undefined,
        serverName: ctx.serverName,
      };
      if (memberOf !== undefined) {
        const backend = resolveMember(memberOf, feature, target);
        if (backend !== undefined) {
          request.backend = backend;
          if (ctx.exchange) ctx.exchange.backend = backend;
        }
      }
      const decision = decide(request);
      if (decision.allowed) return ALLOW;
      const { refusal } = decision;
      if (refusal?.argument !== undefined) {
        return deny(
          `Access denied: argument ${JSON.stringify(refusal.argument)} of ${verb} ${JSON.stringify(target)}: ${refusal.reason}`,
          { argument: refusal.argument, reason: refusal.reason },
        );
      }
      if (refusal !== undefined) {
        return deny(`Access denied: ${verb} ${JSON.stringify(target)}: ${refusal.reason}`, {
          reason: refusal.reason,
        });
      }
      return deny(
        `Access denied: the authorization policy does not permit ${ctx.identity.subject} to ${verb} ${JSON.stringify(target)}`,
      );
    },

    // Only list answers are filtered: every other answer passes unparsed.
    needsResponse: (method) => LISTS[method] !== undefined,

    onServerResponse(response, request, ctx: MessageContext) {
      const list = LISTS[request.method];
      if (!list || response.error) return response;
      const result = response.result;
      const items = isObject(result) ? result[list.field] : undefined;
      if (!isObject(result) || !Array.isArray(items)) return unreadableList(response, request.method);
      const kept = items.filter((raw: unknown) => {
        if (!isObject(raw)) return false;
        const id = raw[list.key];
        if (typeof id !== 'string') return false;
        if (list.feature === 'tool') remember(raw);
        const annotations = list.feature === 'tool' ? toolAnnotations.get(id) : undefined;
        const item: AuthzRequest = {
          identity: ctx.identity,
          feature: list.feature,
          id,
          annotations,
          serverName: ctx.serverName,
        };
        // Set only when resolved: without a resolver the request is what it always was.
        if (memberOf !== undefined) {
          const backend = resolveMember(memberOf, list.feature, id);
          if (backend !== undefined) item.backend = backend;
        }
        return allowed(item);
      });
      return { ...response, result: { ...result, [list.field]: kept } };
    },
  };
}

type Named = { feature: Feature; target: string; verb: string } | { verdict: ClientVerdict };

/** The tool, prompt or resource a method names, or the verdict when it names none we can check. */
function resourceNamed(method: string, params: Record<string, unknown> | undefined): Named {
  if (method === 'completion/complete') {
    const ref = params?.ref;
    const kind = isObject(ref) && typeof ref.type === 'string' ? COMPLETION_REFS[ref.type] : undefined;
    const target = kind && isObject(ref) ? ref[kind.key] : undefined;
    if (!kind || typeof target !== 'string' || target === '') {
      return invalid(
        'Invalid params: completion/complete needs params.ref (ref/prompt with a name, or ref/resource with a uri)',
      );
    }
    return { feature: kind.feature, target, verb: `complete arguments of ${kind.feature}` };
  }
  const call = CALLS[method];
  if (!call) {
    return { verdict: deny(`Access denied: method ${method} is not permitted by the authorization policy`) };
  }
  const target = params?.[call.key];
  if (typeof target !== 'string' || target === '') {
    return invalid(`Invalid params: ${method} needs params.${call.key}`);
  }
  return { feature: call.feature, target, verb: call.verb };
}

function invalid(message: string): Named {
  return { verdict: { action: 'deny', reason: 'invalid', error: { code: RPC.invalidParams, message } } };
}

/** A list answer without a readable list: nothing in it can be shown safely. */
function unreadableList(response: JsonRpcResponse, method: string): JsonRpcResponse {
  log().warn({ method }, 'a list answer from the MCP server could not be read; answering an error instead');
  return {
    jsonrpc: '2.0',
    id: response.id,
    error: {
      code: UNREADABLE_LIST_CODE,
      message: `The MCP server's answer to ${method} could not be read, so the authorization policy could not filter it`,
    },
  };
}

function deny(message: string, data?: Record<string, string>): ClientVerdict {
  const error =
    data === undefined ? { code: AUTHZ_DENIED_CODE, message } : { code: AUTHZ_DENIED_CODE, message, data };
  return { action: 'deny', reason: 'forbidden', error };
}
