import { describe, expect, it } from 'vitest';
import { createToolFilter } from './tool-filter.js';
import { localContext } from '../../../test/support/message-context.js';
import type { JsonRpcRequest } from '../../mcp/jsonrpc.js';
import type { MessagePolicy } from '../../mcp/policy.js';

const ctx = localContext;
const list: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const call = (name: unknown): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name, arguments: {} },
});

async function listed(policy: MessagePolicy, names: string[]): Promise<unknown> {
  const response = await policy.onServerResponse?.(
    {
      jsonrpc: '2.0',
      id: 1,
      result: {
        tools: names.map((name) => ({ name, description: `d-${name}`, inputSchema: {} })),
        nextCursor: 'c',
      },
    },
    list,
    ctx,
  );
  return response?.result;
}

describe('tool filter and override', () => {
  it('is absent when nothing is configured', () => {
    expect(createToolFilter(undefined, undefined)).toBeUndefined();
    expect(createToolFilter([], {})).toBeUndefined();
  });

  it('filters, renames and re-describes list results, keeping other fields', async () => {
    const policy = createToolFilter(['fetch', 'who'], {
      get_me: { name: 'who', description: 'Who am I' },
    }) as MessagePolicy;
    expect(await listed(policy, ['fetch', 'get_me', 'delete_all'])).toEqual({
      tools: [
        { name: 'fetch', description: 'd-fetch', inputSchema: {} },
        { name: 'who', description: 'Who am I', inputSchema: {} },
      ],
      nextCursor: 'c',
    });
  });

  it('accepts filter names given as the server name of a renamed tool', async () => {
    const policy = createToolFilter(['get_me'], { get_me: { name: 'who' } }) as MessagePolicy;
    expect(await listed(policy, ['get_me', 'other'])).toMatchObject({
      tools: [{ name: 'who', description: 'd-get_me' }],
    });
  });

  it('hides a server tool whose name another tool was renamed to', async () => {
    const policy = createToolFilter(undefined, { a: { name: 'b' } }) as MessagePolicy;
    expect(await listed(policy, ['a', 'b'])).toMatchObject({ tools: [{ name: 'b', description: 'd-a' }] });
  });

  it('leaves other responses alone', async () => {
    const policy = createToolFilter(['x'], undefined) as MessagePolicy;
    const response = { jsonrpc: '2.0' as const, id: 3, result: { tools: [{ name: 'y' }] } };
    expect(await policy.onServerResponse?.(response, { ...list, method: 'prompts/list' }, ctx)).toBe(
      response,
    );
    const error = { jsonrpc: '2.0' as const, id: 1, error: { code: -1, message: 'x' } };
    expect(await policy.onServerResponse?.(error, list, ctx)).toBe(error);
  });

  it('maps calls back to the server name and refuses hidden or old names as not found (-32602)', async () => {
    const policy = createToolFilter(['fetch', 'who'], { get_me: { name: 'who' } }) as MessagePolicy;
    expect(await policy.onClientMessage?.(call('who'), ctx)).toEqual({
      action: 'rewrite',
      message: call('get_me'),
    });
    const same = call('fetch');
    expect(await policy.onClientMessage?.(same, ctx)).toEqual({ action: 'allow' });
    for (const [name, why] of [
      ['delete_all', /--tools/],
      ['get_me', /exposed as "who"/],
    ] as const) {
      const verdict = await policy.onClientMessage?.(call(name), ctx);
      expect(verdict).toMatchObject({
        action: 'deny',
        reason: 'not-found',
        error: { code: -32602, data: { tool: name } },
      });
      expect(verdict?.action === 'deny' && verdict.error.message).toMatch(why);
      expect(verdict?.action === 'deny' && verdict.error.message).toContain(name);
    }
    expect(await policy.onClientMessage?.(call(42), ctx)).toMatchObject({
      action: 'deny',
      reason: 'invalid',
    });
    const other: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: 9,
      method: 'prompts/get',
      params: { name: 'delete_all' },
    };
    expect(await policy.onClientMessage?.(other, ctx)).toEqual({ action: 'allow' });
  });

  it('refuses bad override configs naming the field', () => {
    expect(() => createToolFilter(undefined, { a: {} })).toThrow(
      /tools_override\["a"\] needs a name or a description/,
    );
    expect(() => createToolFilter(undefined, { a: { name: 'x' }, b: { name: 'x' } })).toThrow(
      /renames both "a" and "b"/,
    );
    expect(() => createToolFilter(undefined, { a: { name: '' } })).toThrow(/must not be empty/);
  });
});
