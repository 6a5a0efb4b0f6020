/**
 * Tool search (`tool_search`) as a message policy: the client sees two tools, `find_tool` and
 * `call_tool`, instead of the server's whole list. It sits at the top of the chain (after the
 * response tap and the protocol checks, see chain.ts), so on the way down every other policy sees
 * the real request, and on the way back it sees exactly what they left of a tool list:
 *
 * - `tools/list` passes down; its answer (filtered by the tool filter, Cedar, pinning…) is
 *   replaced by the two tools' definitions (`nextCursor` dropped: there is nothing to page).
 * - `tools/call find_tool {query, limit}` becomes a `tools/list` with the same id (and `_meta`);
 *   its answer is ranked (BM25, bm25.ts) and returned as the CallToolResult of find_tool. A
 *   policy cannot follow `nextCursor`, so a server that pages its list is searched over its first
 *   page, and the result says `more: true`. Nothing is cached: every search asks the chain for the
 *   list as it is now, for this caller (a policy cannot answer by itself, and a remembered list
 *   could show what a policy hides since).
 * - `tools/call call_tool {name, arguments}` becomes `tools/call {name, arguments}` (same id, the
 *   other params such as `_meta` kept), so the rate limit, the tool filter, webhooks, Cedar,
 *   guardrails and audit all act on the real tool, and a tool they hide or forbid fails exactly as
 *   a direct call of it would. The exchange's audit target becomes the real tool's name.
 * - A server's own `find_tool` or `call_tool` is listed by find_tool and reachable through
 *   `call_tool {name: "find_tool"}`; a direct call of that name means the proxy's.
 * - Any other `tools/call` (a client that knows a tool's name) passes as it is.
 *
 * Which find_tool a `tools/list` answer belongs to is remembered by session and request id (or by
 * exchange for a sessionless 2026-07-28 request), at most MAX_PENDING at a time.
 */
import type { ExchangeRecord } from '../mcp/exchange.js';
import { RPC, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../mcp/jsonrpc.js';
import { ALLOW, type ClientVerdict, type MessageContext, type MessagePolicy } from '../mcp/policy.js';
import { isObject } from '../util/is-object.js';
import { ToolIndex, type ToolDocument } from './bm25.js';

export const TOOL_SEARCH_POLICY = 'tool-search';
export const FIND_TOOL = 'find_tool';
export const CALL_TOOL = 'call_tool';
export const DEFAULT_LIMIT = 5;
export const MAX_LIMIT = 20;
/** find_tool requests awaiting their list at most (oldest forgotten first). */
const MAX_PENDING = 4096;

const FOUND_TOOL_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    inputSchema: { type: 'object' },
  },
  required: ['name', 'inputSchema'],
};

/** The two tools a client sees, as `tools/list` entries. */
export const TOOL_SEARCH_TOOLS = [
  {
    name: FIND_TOOL,
    title: 'Find a tool',
    description:
      'Search the tools this server offers and return the best matches for what you want to do, ' +
      'each with its name, description and input schema. Describe the task in plain words ' +
      '(for example "read a file", "current time in Tokyo"), then call the tool you picked with call_tool.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'What you want to do, in plain words.' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_LIMIT,
          default: DEFAULT_LIMIT,
          description: `How many tools to return at most (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`,
        },
      },
      required: ['query'],
    },
    outputSchema: {
      type: 'object',
      properties: {
        tools: { type: 'array', items: FOUND_TOOL_SCHEMA, description: 'The matches, best first.' },
        searched: { type: 'integer', description: 'How many tools were searched.' },
        more: { type: 'boolean', description: 'The server has more tools than were searched.' },
      },
      required: ['tools', 'searched'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description:
      'Call a tool found with find_tool: its exact name, and arguments that match its input schema. ' +
      "Returns the tool's own result.",
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'The exact name find_tool returned.' },
        arguments: {
          type: 'object',
          additionalProperties: true,
          description: "The tool's arguments, as its input schema describes them.",
        },
      },
      required: ['name'],
    },
  },
] as const;

interface Find {
  query: string;
  limit: number;
}

function invalid(message: string, field: string): ClientVerdict {
  return {
    action: 'deny',
    reason: 'invalid',
    error: { code: RPC.invalidParams, message: `Invalid params: ${message}`, data: { field } },
  };
}

/** find_tool's arguments, or the refusal naming the field that is wrong. */
function findArguments(args: unknown): Find | ClientVerdict {
  if (!isObject(args)) return invalid('find_tool needs arguments {query, limit?}', 'arguments');
  const { query, limit } = args;
  if (typeof query !== 'string' || query.trim() === '') {
    return invalid('find_tool needs arguments.query (a non-empty string)', 'arguments.query');
  }
  if (limit === undefined) return { query, limit: DEFAULT_LIMIT };
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    return invalid(
      `find_tool's arguments.limit must be an integer from 1 to ${MAX_LIMIT}`,
      'arguments.limit',
    );
  }
  return { query, limit };
}

/** The entries of a tool list answer worth showing (an object with a string name). */
function listedTools(result: Record<string, unknown>): Record<string, unknown>[] {
  const tools = result.tools;
  if (!Array.isArray(tools)) return [];
  return tools.filter((t): t is Record<string, unknown> => isObject(t) && typeof t.name === 'string');
}

/** What the index reads of a listed tool. */
export function toolDocument(tool: Record<string, unknown>): ToolDocument {
  const properties = isObject(tool.inputSchema) ? tool.inputSchema.properties : undefined;
  const args: Record<string, { description?: string }> = {};
  if (isObject(properties)) {
    for (const [arg, schema] of Object.entries(properties)) {
      const description = isObject(schema) ? schema.description : undefined;
      args[arg] = typeof description === 'string' ? { description } : {};
    }
  }
  return {
    name: tool.name as string,
    ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
    ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
    arguments: args,
  };
}

/** find_tool's answer from the (filtered) list answer. */
function foundTools(response: JsonRpcResponse, find: Find): JsonRpcResponse {
  if (!isObject(response.result)) return response;
  const tools = listedTools(response.result);
  const byName = new Map(tools.map((t) => [t.name as string, t]));
  const hits = new ToolIndex(tools.map(toolDocument)).search(find.query, find.limit).map(({ name }) => {
    const tool = byName.get(name) as Record<string, unknown>;
    return {
      name,
      ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      inputSchema: isObject(tool.inputSchema) ? tool.inputSchema : { type: 'object' },
    };
  });
  const structured = {
    tools: hits,
    searched: tools.length,
    ...(typeof response.result.nextCursor === 'string' ? { more: true } : {}),
  };
  return {
    jsonrpc: '2.0',
    id: response.id,
    result: { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured },
  };
}

/** Where find_tool requests wait for their list: by session and id, or by exchange. */
class PendingFinds {
  readonly #bySession = new Map<string, Find>();
  readonly #byExchange = new WeakMap<ExchangeRecord, Map<string, Find>>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  add(ctx: MessageContext, id: JsonRpcId, find: Find): void {
    const key = JSON.stringify(id);
    if (ctx.sessionId === undefined && ctx.exchange) {
      let finds = this.#byExchange.get(ctx.exchange);
      if (!finds) this.#byExchange.set(ctx.exchange, (finds = new Map<string, Find>()));
      finds.set(key, find);
      return;
    }
    const sessionKey = `${ctx.sessionId ?? ''}\u0000${key}`;
    this.#bySession.delete(sessionKey);
    if (this.#bySession.size >= this.#max)
      this.#bySession.delete(this.#bySession.keys().next().value as string);
    this.#bySession.set(sessionKey, find);
  }

  take(ctx: MessageContext, id: JsonRpcId): Find | undefined {
    const key = JSON.stringify(id);
    if (ctx.sessionId === undefined && ctx.exchange) {
      const finds = this.#byExchange.get(ctx.exchange);
      const find = finds?.get(key);
      finds?.delete(key);
      return find;
    }
    const sessionKey = `${ctx.sessionId ?? ''}\u0000${key}`;
    const find = this.#bySession.get(sessionKey);
    this.#bySession.delete(sessionKey);
    return find;
  }
}

export function createToolSearchPolicy(options: { maxPending?: number } = {}): MessagePolicy {
  const pending = new PendingFinds(options.maxPending ?? MAX_PENDING);

  function find(message: JsonRpcRequest, ctx: MessageContext): ClientVerdict {
    const args = findArguments(message.params?.arguments);
    if ('action' in args) return args;
    pending.add(ctx, message.id, args);
    const meta = message.params?._meta;
    return {
      action: 'rewrite',
      message: {
        jsonrpc: '2.0',
        id: message.id,
        method: 'tools/list',
        ...(isObject(meta) ? { params: { _meta: meta } } : {}),
      },
    };
  }

  function call(message: JsonRpcRequest, ctx: MessageContext): ClientVerdict {
    const args = message.params?.arguments;
    if (!isObject(args)) return invalid('call_tool needs arguments {name, arguments?}', 'arguments');
    const { name, arguments: inner } = args;
    if (typeof name !== 'string' || name === '') {
      return invalid(
        'call_tool needs arguments.name (the tool to call, a non-empty string)',
        'arguments.name',
      );
    }
    if (inner !== undefined && !isObject(inner)) {
      return invalid("call_tool's arguments.arguments must be an object", 'arguments.arguments');
    }
    if (ctx.exchange) ctx.exchange.target = name;
    const { arguments: _outer, ...params } = message.params ?? {};
    return {
      action: 'rewrite',
      message: {
        ...message,
        params: { ...params, name, ...(inner === undefined ? {} : { arguments: inner }) },
      },
    };
  }

  return {
    name: TOOL_SEARCH_POLICY,

    onClientMessage(message, ctx) {
      if (!('method' in message) || message.method !== 'tools/call') return ALLOW;
      const name = message.params?.name;
      if (name !== FIND_TOOL && name !== CALL_TOOL) return ALLOW;
      // A notification has no answer to put the result in: refused like a malformed call.
      if (!('id' in message)) return invalid(`${name} is a request, not a notification`, 'id');
      return name === FIND_TOOL ? find(message, ctx) : call(message, ctx);
    },

    // Only tool lists are read: every other answer passes unparsed.
    needsResponse: (method) => method === 'tools/list',

    onServerResponse(response, request, ctx) {
      if (request.method !== 'tools/list') return response;
      const search = pending.take(ctx, request.id);
      if (search) return response.error ? response : foundTools(response, search);
      if (!isObject(response.result)) return response;
      const { nextCursor: _next, ...result } = response.result;
      return { ...response, result: { ...result, tools: TOOL_SEARCH_TOOLS } };
    },
  };
}
