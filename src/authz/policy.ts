/**
 * The authorization message policy: every client request is mapped to a Cedar request and denied
 * as forbidden with a JSON-RPC error that says so (not "not found"); list responses keep only the
 * tools, prompts and resources the caller could use. Protocol plumbing (initialize, ping,
 * notifications, logging, completion, tasks) passes; any other method is denied, because a
 * method we cannot classify is one we cannot authorize.
 */
import { log } from '../util/log.js';
import { errorMessage } from '../util/errors.js';
import type { AuthzRequest, CedarAuthorizer, Feature } from './cedar.js';
import { RPC } from '../mcp/jsonrpc.js';
import { ALLOW, type ClientVerdict, type MessageContext, type MessagePolicy } from '../mcp/policy.js';

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
  { feature: Feature; field: 'tools' | 'prompts' | 'resources'; key: 'name' | 'uri' }
> = {
  'tools/list': { feature: 'tool', field: 'tools', key: 'name' },
  'prompts/list': { feature: 'prompt', field: 'prompts', key: 'name' },
  'resources/list': { feature: 'resource', field: 'resources', key: 'uri' },
};

/** Methods that carry no tool, prompt or resource access of their own. */
const ALWAYS_ALLOWED = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'completion/complete',
  'resources/templates/list',
  'roots/list',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
]);

/** Tool annotations remembered from tools/list answers; bounded so a hostile server cannot grow it. */
const MAX_REMEMBERED_TOOLS = 10_000;

export function createAuthzPolicy(authorizer: CedarAuthorizer): MessagePolicy {
  const toolAnnotations = new Map<string, Record<string, unknown>>();
  const remember = (tool: Record<string, unknown>): void => {
    const { name, annotations } = tool;
    if (typeof name !== 'string' || typeof annotations !== 'object' || annotations === null) return;
    if (toolAnnotations.size >= MAX_REMEMBERED_TOOLS) toolAnnotations.clear();
    toolAnnotations.set(name, annotations as Record<string, unknown>);
  };
  const allowed = (request: AuthzRequest): boolean => {
    try {
      return authorizer.authorize(request).allowed;
    } catch (err) {
      log().error(
        { err: errorMessage(err), feature: request.feature, id: request.id },
        'authorization failed; denying',
      );
      return false;
    }
  };

  return {
    name: 'authz',
    onClientMessage(message, ctx): ClientVerdict {
      if (!('method' in message)) return ALLOW;
      const { method } = message;
      if (ALWAYS_ALLOWED.has(method) || method.startsWith('notifications/') || method in LISTS) {
        return ALLOW;
      }
      const call = CALLS[method];
      if (!call) return deny(`Access denied: method ${method} is not permitted by the authorization policy`);
      const target = message.params?.[call.key];
      if (typeof target !== 'string' || target === '') {
        return {
          action: 'deny',
          reason: 'invalid',
          error: { code: RPC.invalidParams, message: `Invalid params: ${method} needs params.${call.key}` },
        };
      }
      const args = message.params?.arguments;
      const request: AuthzRequest = {
        identity: ctx.identity,
        feature: call.feature,
        id: target,
        arguments:
          typeof args === 'object' && args !== null && !Array.isArray(args)
            ? (args as Record<string, unknown>)
            : {},
        annotations: call.feature === 'tool' ? toolAnnotations.get(target) : undefined,
        serverName: ctx.serverName,
      };
      if (allowed(request)) return ALLOW;
      return deny(
        `Access denied: the authorization policy does not permit ${ctx.identity.subject} to ${call.verb} ${JSON.stringify(target)}`,
      );
    },

    onServerResponse(response, request, ctx: MessageContext) {
      const list = LISTS[request.method];
      const result = response.result as Record<string, unknown> | undefined;
      const items = result?.[list?.field ?? ''];
      if (!list || !Array.isArray(items)) return response;
      const kept = items.filter((raw: unknown) => {
        if (typeof raw !== 'object' || raw === null) return false;
        const item = raw as Record<string, unknown>;
        const id = item[list.key];
        if (typeof id !== 'string') return false;
        if (list.feature === 'tool') remember(item);
        const annotations = list.feature === 'tool' ? toolAnnotations.get(id) : undefined;
        return allowed({
          identity: ctx.identity,
          feature: list.feature,
          id,
          annotations,
          serverName: ctx.serverName,
        });
      });
      return { ...response, result: { ...result, [list.field]: kept } };
    },
  };
}

function deny(message: string): ClientVerdict {
  return { action: 'deny', reason: 'forbidden', error: { code: AUTHZ_DENIED_CODE, message } };
}
