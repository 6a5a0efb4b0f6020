import { describe, expect, it } from 'vitest';
import { localContext } from '../../test/support/message-context.js';
import type { ExchangeRecord } from '../mcp/exchange.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../mcp/jsonrpc.js';
import {
  runClientPolicies,
  runServerPolicies,
  type MessageContext,
  type MessagePolicy,
} from '../mcp/policy.js';
import { createToolSearchPolicy, TOOL_SEARCH_TOOLS } from './policy.js';

const TOOLS = [
  {
    name: 'get_current_time',
    description: 'Current time in a timezone',
    inputSchema: { type: 'object', properties: { timezone: { type: 'string' } } },
  },
  {
    name: 'read_file',
    title: 'Read file',
    description: 'Read a file from disk',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  { name: 'fetch', description: 'Fetch a URL', inputSchema: { type: 'object' } },
];

const listAnswer = (id: number, extra: Record<string, unknown> = {}): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  result: { tools: TOOLS, ...extra },
});

const toolCall = (
  id: number,
  name: string,
  args?: unknown,
  extra: Record<string, unknown> = {},
): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...(args === undefined ? {} : { arguments: args }), ...extra },
});

function session(id: string): MessageContext & { exchange: ExchangeRecord } {
  return { ...localContext, sessionId: id, exchange: {} };
}

function sent(message: JsonRpcMessage, ctx: MessageContext, policy = createToolSearchPolicy()) {
  const verdict = runClientPolicies([policy], message, ctx);
  if ('then' in verdict) throw new Error('tool search decides synchronously');
  return verdict;
}

/** The request the policy sends down for a message it passes. */
function forwardedOf(message: JsonRpcMessage, ctx: MessageContext, policy: MessagePolicy): JsonRpcRequest {
  const verdict = sent(message, ctx, policy);
  if (verdict.action !== 'forward') throw new Error(`refused: ${verdict.error.message}`);
  return verdict.message as JsonRpcRequest;
}

describe('tool search policy: client messages', () => {
  it('lets tools/list, other methods and other tools pass untouched', () => {
    const ctx = session('s');
    for (const message of [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'resources/list' },
      toolCall(3, 'fetch', { url: 'x' }),
    ] as JsonRpcMessage[]) {
      expect(sent(message, ctx)).toEqual({ action: 'forward', message, rewritten: false });
    }
  });

  it('turns find_tool into a tools/list with the same id, keeping _meta', () => {
    const meta = { progressToken: 7 };
    const verdict = sent(toolCall(4, 'find_tool', { query: 'time' }, { _meta: meta }), session('s'));
    expect(verdict).toEqual({
      action: 'forward',
      message: { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: meta } },
      rewritten: true,
    });
  });

  it('turns call_tool into a call of the real tool, keeping the other params, and audits its name', () => {
    const ctx = session('s');
    const verdict = sent(
      toolCall(
        5,
        'call_tool',
        { name: 'fetch', arguments: { url: 'https://example.com' } },
        { _meta: { a: 1 } },
      ),
      ctx,
    );
    expect(verdict).toEqual({
      action: 'forward',
      message: toolCall(5, 'fetch', { url: 'https://example.com' }, { _meta: { a: 1 } }),
      rewritten: true,
    });
    expect(ctx.exchange.target).toBe('fetch');
    // No arguments: the real call has none either.
    expect(sent(toolCall(6, 'call_tool', { name: 'fetch' }), ctx)).toMatchObject({
      message: { params: { name: 'fetch' } },
    });
  });

  it.each([
    ['find_tool', undefined, 'arguments'],
    ['find_tool', { query: '' }, 'arguments.query'],
    ['find_tool', { query: 3 }, 'arguments.query'],
    ['find_tool', { query: 'x', limit: 0 }, 'arguments.limit'],
    ['find_tool', { query: 'x', limit: 21 }, 'arguments.limit'],
    ['find_tool', { query: 'x', limit: 2.5 }, 'arguments.limit'],
    ['call_tool', undefined, 'arguments'],
    ['call_tool', { arguments: {} }, 'arguments.name'],
    ['call_tool', { name: '' }, 'arguments.name'],
    ['call_tool', { name: 'fetch', arguments: [1] }, 'arguments.arguments'],
    ['call_tool', { name: 'fetch', arguments: 'x' }, 'arguments.arguments'],
  ])('%s with %j is refused as invalid params naming %s', (tool, args, field) => {
    const verdict = sent(toolCall(7, tool, args), session('s'));
    expect(verdict).toMatchObject({
      action: 'deny',
      reason: 'invalid',
      policy: 'tool-search',
      error: { code: -32602, data: { field } },
    });
    expect((verdict as { error: { message: string } }).error.message).toContain(field);
  });

  it('refuses find_tool and call_tool sent as notifications', () => {
    const notification = {
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'call_tool', arguments: { name: 'x' } },
    };
    expect(sent(notification as JsonRpcMessage, session('s'))).toMatchObject({
      action: 'deny',
      reason: 'invalid',
    });
  });
});

describe('tool search policy: answers', () => {
  it('replaces a tools/list answer by the two tools, dropping nextCursor and keeping the rest', async () => {
    const policy = createToolSearchPolicy();
    const ctx = session('s');
    const list: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    sent(list, ctx, policy);
    const out = await runServerPolicies([policy], listAnswer(1, { nextCursor: 'c', ttlMs: 5 }), list, ctx);
    expect(out).toEqual({ jsonrpc: '2.0', id: 1, result: { tools: TOOL_SEARCH_TOOLS, ttlMs: 5 } });
  });

  it("ranks find_tool's list answer into a CallToolResult", async () => {
    const policy = createToolSearchPolicy();
    const ctx = session('s');
    const forwarded = forwardedOf(
      toolCall(9, 'find_tool', { query: 'what time is it in Paris', limit: 1 }),
      ctx,
      policy,
    );
    const out = await runServerPolicies([policy], listAnswer(9), forwarded, ctx);
    const structured = {
      tools: [
        {
          name: 'get_current_time',
          description: 'Current time in a timezone',
          inputSchema: TOOLS[0]!.inputSchema,
        },
      ],
      searched: 3,
    };
    expect(out).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: {
        content: [{ type: 'text', text: JSON.stringify(structured) }],
        structuredContent: structured,
      },
    });
  });

  it('says when the server has more tools than its first page', async () => {
    const policy = createToolSearchPolicy();
    const ctx = session('s');
    const forwarded = forwardedOf(toolCall(1, 'find_tool', { query: 'file' }), ctx, policy);
    const out = await runServerPolicies([policy], listAnswer(1, { nextCursor: 'p2' }), forwarded, ctx);
    expect(out.result).toMatchObject({
      structuredContent: { tools: [{ name: 'read_file', title: 'Read file' }], searched: 3, more: true },
    });
  });

  it('passes an error answer to find_tool on as it is', async () => {
    const policy = createToolSearchPolicy();
    const ctx = session('s');
    const forwarded = forwardedOf(toolCall(2, 'find_tool', { query: 'x' }), ctx, policy);
    const error: JsonRpcResponse = { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'no' } };
    expect(await runServerPolicies([policy], error, forwarded, ctx)).toBe(error);
  });

  it('tells find_tool answers apart per session, and per exchange without a session', async () => {
    const policy = createToolSearchPolicy();
    const a = session('a');
    const b = session('b');
    const forwarded = forwardedOf(toolCall(1, 'find_tool', { query: 'fetch' }), a, policy);
    // Session b's own tools/list with the same id is a plain list.
    const plain = await runServerPolicies([policy], listAnswer(1), forwarded, b);
    expect(plain.result).toEqual({ tools: TOOL_SEARCH_TOOLS });
    const found = await runServerPolicies([policy], listAnswer(1), forwarded, a);
    expect(found.result).toMatchObject({ structuredContent: { tools: [{ name: 'fetch' }] } });

    const stateless1 = { ...localContext, exchange: {} };
    const stateless2 = { ...localContext, exchange: {} };
    sent(toolCall(1, 'find_tool', { query: 'fetch' }), stateless1, policy);
    expect((await runServerPolicies([policy], listAnswer(1), forwarded, stateless2)).result).toEqual({
      tools: TOOL_SEARCH_TOOLS,
    });
    expect((await runServerPolicies([policy], listAnswer(1), forwarded, stateless1)).result).toHaveProperty(
      'structuredContent',
    );
  });

  it('forgets the oldest pending find_tool past its bound', async () => {
    const policy = createToolSearchPolicy({ maxPending: 2 });
    const ctx = session('s');
    for (const id of [1, 2, 3]) sent(toolCall(id, 'find_tool', { query: 'fetch' }), ctx, policy);
    const list: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect((await runServerPolicies([policy], listAnswer(1), list, ctx)).result).toEqual({
      tools: TOOL_SEARCH_TOOLS,
    });
    expect((await runServerPolicies([policy], listAnswer(3), { ...list, id: 3 }, ctx)).result).toHaveProperty(
      'structuredContent',
    );
  });

  it("finds a server's own find_tool, reachable only through call_tool", async () => {
    const policy = createToolSearchPolicy();
    const ctx = session('s');
    const own = {
      name: 'find_tool',
      description: "The server's own finder of things",
      inputSchema: { type: 'object' },
    };
    const forwarded = forwardedOf(toolCall(1, 'find_tool', { query: 'finder of things' }), ctx, policy);
    const out = await runServerPolicies(
      [policy],
      { jsonrpc: '2.0', id: 1, result: { tools: [own] } },
      forwarded,
      ctx,
    );
    expect(out.result).toMatchObject({ structuredContent: { tools: [{ name: 'find_tool' }] } });
    expect(
      forwardedOf(toolCall(2, 'call_tool', { name: 'find_tool', arguments: { q: 1 } }), ctx, policy),
    ).toEqual(toolCall(2, 'find_tool', { q: 1 }));
  });

  it('screens only tools/list answers', () => {
    const policy = createToolSearchPolicy();
    expect(policy.needsResponse?.('tools/list', '{}')).toBe(true);
    expect(policy.needsResponse?.('tools/call', '{}')).toBe(false);
    expect(policy.needsResponse?.('resources/read', '{}')).toBe(false);
  });
});
