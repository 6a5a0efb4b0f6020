/**
 * --tools and --tools-override as one message policy: tools/list responses show only the allowed
 * tools, renamed and re-described; tools/call uses the exposed name and is mapped back to the
 * server's own name, and a call to any other tool is refused with a JSON-RPC error naming it.
 *
 * The refusal is a `not-found` denial with error -32602, the answer a server gives for a tool it
 * does not have (the edge sends it as HTTP 200): MCP clients report it as a failed tool call, while a 4xx would surface as a transport
 * failure. A filter name may be either the server's name or the exposed (overridden) name.
 */
import type { ToolOverride } from '../../config/runconfig.js';
import { usageError } from '../../util/errors.js';
import { RPC, type JsonRpcResponse } from '../../mcp/jsonrpc.js';
import { ALLOW, type ClientVerdict, type MessagePolicy } from '../../mcp/policy.js';
import { isObject } from '../../util/is-object.js';

export const TOOL_FILTER_POLICY = 'tool-filter';

interface ToolNames {
  /** Server name → exposed name (only renamed tools). */
  renamed: Map<string, string>;
  /** Exposed name → server name (only renamed tools). */
  original: Map<string, string>;
}

function namesFrom(overrides: Record<string, ToolOverride>): ToolNames {
  const renamed = new Map<string, string>();
  const original = new Map<string, string>();
  for (const [name, override] of Object.entries(overrides)) {
    if (override.name === undefined && override.description === undefined) {
      throw usageError(`tools_override["${name}"] needs a name or a description`);
    }
    if (override.name === undefined || override.name === name) continue;
    if (override.name === '') throw usageError(`tools_override["${name}"].name must not be empty`);
    const other = original.get(override.name);
    if (other !== undefined) {
      throw usageError(`tools_override renames both "${other}" and "${name}" to "${override.name}"`);
    }
    renamed.set(name, override.name);
    original.set(override.name, name);
  }
  return { renamed, original };
}

/** The tool filter/override policy, or undefined when neither is configured. */
export function createToolFilter(
  filter: readonly string[] | undefined,
  overrides: Record<string, ToolOverride> | undefined,
): MessagePolicy | undefined {
  const allow = filter && filter.length > 0 ? new Set(filter) : undefined;
  const overrideMap = overrides ?? {};
  if (!allow && Object.keys(overrideMap).length === 0) return undefined;
  const names = namesFrom(overrideMap);

  const exposedName = (serverName: string): string => names.renamed.get(serverName) ?? serverName;
  const allowed = (serverName: string): boolean =>
    !allow || allow.has(serverName) || allow.has(exposedName(serverName));
  /** The server's name for a name the client used; undefined when the client cannot call it. */
  const serverNameFor = (called: string): string | undefined => {
    const original = names.original.get(called);
    if (original !== undefined) return original;
    // A renamed tool is reachable only under its new name.
    return names.renamed.has(called) ? undefined : called;
  };

  function notFound(called: string): ClientVerdict {
    const newName = names.renamed.get(called);
    const why = newName
      ? `it is exposed as "${newName}"`
      : 'this proxy exposes only the tools selected with --tools';
    return {
      action: 'deny',
      reason: 'not-found',
      error: { code: RPC.invalidParams, message: `Unknown tool: ${called} (${why})`, data: { tool: called } },
    };
  }

  return {
    name: TOOL_FILTER_POLICY,

    onClientMessage(message) {
      // Decided by method, whatever the shape: a tools/call notification is refused like the request.
      if (!('method' in message) || message.method !== 'tools/call') return ALLOW;
      const called = message.params?.name;
      if (typeof called !== 'string') {
        return {
          action: 'deny',
          reason: 'invalid',
          error: {
            code: RPC.invalidParams,
            message: 'Invalid params: tools/call needs params.name (a string)',
          },
        };
      }
      const serverName = serverNameFor(called);
      if (serverName === undefined || !allowed(serverName)) return notFound(called);
      if (serverName === called) return ALLOW;
      return { action: 'rewrite', message: { ...message, params: { ...message.params, name: serverName } } };
    },

    // Only tools/list answers are filtered and renamed: every other answer passes unparsed.
    needsResponse: (method) => method === 'tools/list',

    onServerResponse(response, request): JsonRpcResponse {
      if (request.method !== 'tools/list' || !isObject(response.result)) return response;
      const tools = response.result.tools;
      if (!Array.isArray(tools)) return response;
      const shown: unknown[] = [];
      for (const tool of tools) {
        if (!isObject(tool) || typeof tool.name !== 'string') continue;
        const serverName = tool.name;
        // Another tool took this name through an override; this one is unreachable.
        if (names.original.has(serverName) && names.original.get(serverName) !== serverName) continue;
        if (!allowed(serverName)) continue;
        const override = overrideMap[serverName];
        shown.push(
          override
            ? {
                ...tool,
                name: exposedName(serverName),
                ...(override.description === undefined ? {} : { description: override.description }),
              }
            : tool,
        );
      }
      return { ...response, result: { ...response.result, tools: shown } };
    },
  };
}
