/**
 * The proxy's check of MCP 2026-07-28 custom headers (`Mcp-Param-*`, see param-headers.ts) as a
 * message policy. It learns each tool's `x-mcp-header` declarations from the `tools/list` answers
 * it relays (as the client sees them: exposed names, after the tool filter), and refuses a
 * 2026-07-28 `tools/call` whose headers disagree with its arguments with HTTP 400 and -32020, the
 * answer the revision prescribes, before any policy or the server acts on the call. A call to a
 * tool this process has not seen listed passes unchecked (the server checks its own headers).
 * The HTTP forwarder leaves it out for 2025-era requests (`statelessOnly`), whose lists then teach
 * it nothing.
 */
import { isRequest, type JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import { ALLOW, type MessagePolicy } from '../../../mcp/policy.js';
import { isStatelessRequest } from '../decision.js';
import { paramHeaderDeclarations, paramHeaderProblem, type ParamHeaderDeclaration } from './param-headers.js';
import { isObject } from '../../../util/is-object.js';

export const PARAM_HEADER_POLICY = 'param-headers';

/** Tools with declarations remembered at most (oldest forgotten first): bounds memory per process. */
const MAX_TOOLS = 4096;

export function createParamHeaderPolicy(): MessagePolicy {
  const declared = new Map<string, ParamHeaderDeclaration[]>();

  const learn = (response: JsonRpcResponse): void => {
    const tools = isObject(response.result) ? response.result.tools : undefined;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (!isObject(tool) || typeof tool.name !== 'string') continue;
      const declarations = paramHeaderDeclarations(tool.inputSchema);
      declared.delete(tool.name);
      if (declarations.length === 0) continue;
      if (declared.size >= MAX_TOOLS) declared.delete(declared.keys().next().value as string);
      declared.set(tool.name, declarations);
    }
  };

  return {
    name: PARAM_HEADER_POLICY,
    // Over HTTP, 2025-era requests skip it (no cost to them); it then learns from 2026-07-28 lists.
    statelessOnly: true,
    needsResponse: (method) => method === 'tools/list',
    onServerResponse(response, request) {
      if (request.method === 'tools/list') learn(response);
      return response;
    },
    onClientMessage(message, ctx) {
      if (!isRequest(message) || message.method !== 'tools/call' || !isStatelessRequest(ctx)) {
        return ALLOW;
      }
      const name = message.params?.name;
      const declarations = typeof name === 'string' ? declared.get(name) : undefined;
      if (declarations === undefined) return ALLOW;
      const error = paramHeaderProblem(declarations, message.params?.arguments, ctx.headers);
      return error ? { action: 'deny', reason: 'invalid', error } : ALLOW;
    },
  };
}
