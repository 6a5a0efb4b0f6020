import { describe, expect, it } from 'vitest';
import { CedarAuthorizer } from './cedar.js';
import { validateAuthzConfig } from './config.js';
import { AUTHZ_DENIED_CODE, createAuthzPolicy } from './policy.js';
import type { Identity } from '../mcp/identity.js';
import type { JsonRpcMessage } from '../mcp/jsonrpc.js';
import type { MessageContext } from '../mcp/policy.js';

const policy = createAuthzPolicy(
  new CedarAuthorizer(
    validateAuthzConfig(
      {
        type: 'cedarv1',
        cedar: {
          policies: [
            'permit(principal, action == Action::"call_tool", resource == Tool::"weather");',
            'permit(principal in MoatGroup::"admins", action, resource);',
            'permit(principal, action == Action::"read_resource", resource == Resource::"file:///public");',
          ],
        },
      },
      'test',
    ),
  ),
);

function ctx(subject: string, groups: string[] = []): MessageContext {
  const identity: Identity = { subject, groups, claims: { sub: subject }, local: false };
  return {
    identity,
    serverName: 'wx',
    transport: 'streamable-http',
    clientAddress: '127.0.0.1',
    headers: {},
  };
}

const call = (method: string, params?: Record<string, unknown>): JsonRpcMessage => ({
  jsonrpc: '2.0',
  id: 1,
  method,
  ...(params ? { params } : {}),
});

describe('authz policy', () => {
  it('forwards a permitted call unchanged', async () => {
    const message = call('tools/call', { name: 'weather', arguments: { location: 'NYC' } });
    expect(await policy.onClientMessage!(message, ctx('alice'))).toEqual({ action: 'allow' });
  });

  it('denies with 403 and a message that says it was denied', async () => {
    const verdict = await policy.onClientMessage!(call('tools/call', { name: 'rm_rf' }), ctx('alice'));
    expect(verdict).toEqual({
      action: 'deny',
      reason: 'forbidden',
      error: {
        code: AUTHZ_DENIED_CODE,
        message: 'Access denied: the authorization policy does not permit alice to call tool "rm_rf"',
      },
    });
  });

  it('maps prompts and resources, and lets group members through', async () => {
    expect((await policy.onClientMessage!(call('prompts/get', { name: 'p' }), ctx('alice'))).action).toBe(
      'deny',
    );
    expect(
      (await policy.onClientMessage!(call('prompts/get', { name: 'p' }), ctx('root', ['admins']))).action,
    ).toBe('allow');
    const read = (uri: string) => call('resources/read', { uri });
    expect((await policy.onClientMessage!(read('file:///public'), ctx('alice'))).action).toBe('allow');
    expect((await policy.onClientMessage!(read('file:///etc/shadow'), ctx('alice'))).action).toBe('deny');
    expect(
      (await policy.onClientMessage!(call('resources/subscribe', { uri: 'file:///x' }), ctx('a'))).action,
    ).toBe('deny');
  });

  it('passes protocol plumbing and denies methods it cannot classify', async () => {
    for (const method of [
      'initialize',
      'ping',
      'notifications/initialized',
      'logging/setLevel',
      'tools/list',
    ]) {
      expect((await policy.onClientMessage!(call(method), ctx('alice'))).action).toBe('allow');
    }
    const verdict = await policy.onClientMessage!(call('admin/shutdown'), ctx('alice'));
    expect(verdict).toMatchObject({ action: 'deny', reason: 'forbidden' });
    expect(verdict.action === 'deny' && verdict.error.message).toMatch(
      /method admin\/shutdown is not permitted/,
    );
    const response: JsonRpcMessage = { jsonrpc: '2.0', id: 5, result: {} };
    expect((await policy.onClientMessage!(response, ctx('alice'))).action).toBe('allow');
  });

  it('refuses a call without a name as bad params, not as a denial', async () => {
    expect(await policy.onClientMessage!(call('tools/call', {}), ctx('alice'))).toMatchObject({
      action: 'deny',
      reason: 'invalid',
    });
  });

  it('gives policies the tool annotations the server listed', async () => {
    const readOnly = createAuthzPolicy(
      new CedarAuthorizer(
        validateAuthzConfig(
          {
            type: 'cedarv1',
            cedar: {
              policies: [
                'permit(principal, action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
              ],
            },
          },
          'test',
        ),
      ),
    );
    const list = await readOnly.onServerResponse!(
      {
        jsonrpc: '2.0',
        id: 1,
        result: {
          tools: [
            { name: 'get', annotations: { readOnlyHint: true } },
            { name: 'put', annotations: { readOnlyHint: false, destructiveHint: true } },
            { name: 'plain' },
          ],
        },
      },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      ctx('alice'),
    );
    expect((list.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(['get']);
    expect((await readOnly.onClientMessage!(call('tools/call', { name: 'get' }), ctx('alice'))).action).toBe(
      'allow',
    );
    expect((await readOnly.onClientMessage!(call('tools/call', { name: 'put' }), ctx('alice'))).action).toBe(
      'deny',
    );
    expect(
      (await readOnly.onClientMessage!(call('tools/call', { name: 'unlisted' }), ctx('alice'))).action,
    ).toBe('deny');
  });

  it('filters list responses by the same decisions', async () => {
    const request = { jsonrpc: '2.0' as const, id: 2, method: 'tools/list' };
    const response = {
      jsonrpc: '2.0' as const,
      id: 2,
      result: {
        tools: [{ name: 'weather', description: 'w' }, { name: 'rm_rf' }, { bogus: true }],
        nextCursor: 'c',
      },
    };
    expect(await policy.onServerResponse!(response, request, ctx('alice'))).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { tools: [{ name: 'weather', description: 'w' }], nextCursor: 'c' },
    });
    const all = await policy.onServerResponse!(response, request, ctx('root', ['admins']));
    expect((all.result as { tools: unknown[] }).tools).toHaveLength(2);
    const resources = await policy.onServerResponse!(
      {
        jsonrpc: '2.0',
        id: 3,
        result: { resources: [{ uri: 'file:///public' }, { uri: 'file:///secret' }] },
      },
      { jsonrpc: '2.0', id: 3, method: 'resources/list' },
      ctx('alice'),
    );
    expect(resources.result).toEqual({ resources: [{ uri: 'file:///public' }] });
    const error = { jsonrpc: '2.0' as const, id: 4, error: { code: -32000, message: 'x' } };
    expect(await policy.onServerResponse!(error, request, ctx('alice'))).toBe(error);
  });

  it('decides completion/complete by the prompt or resource its ref names', async () => {
    const complete = (ref: unknown) =>
      call('completion/complete', { ref, argument: { name: 'a', value: 'x' } });
    const verdict = async (ref: unknown, who = ctx('alice')) =>
      (await policy.onClientMessage!(complete(ref), who)).action;
    expect(await verdict({ type: 'ref/resource', uri: 'file:///public' })).toBe('allow');
    expect(await verdict({ type: 'ref/resource', uri: 'file:///secret' })).toBe('deny');
    expect(await verdict({ type: 'ref/prompt', name: 'p' })).toBe('deny');
    expect(await verdict({ type: 'ref/prompt', name: 'p' }, ctx('root', ['admins']))).toBe('allow');
    for (const bad of [
      undefined,
      {},
      { type: 'ref/tool', name: 'weather' },
      { type: 'ref/prompt', uri: 'p' },
    ]) {
      expect(await policy.onClientMessage!(complete(bad), ctx('root', ['admins']))).toMatchObject({
        action: 'deny',
        reason: 'invalid',
      });
    }
  });

  it('decides a call sent as a notification like the request', async () => {
    const notification: JsonRpcMessage = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'rm_rf' } };
    expect((await policy.onClientMessage!(notification, ctx('alice'))).action).toBe('deny');
  });

  it('filters resource templates by their URI template', async () => {
    const answer = await policy.onServerResponse!(
      {
        jsonrpc: '2.0',
        id: 6,
        result: { resourceTemplates: [{ uriTemplate: 'file:///public' }, { uriTemplate: 'file:///{path}' }] },
      },
      { jsonrpc: '2.0', id: 6, method: 'resources/templates/list' },
      ctx('alice'),
    );
    expect(answer.result).toEqual({ resourceTemplates: [{ uriTemplate: 'file:///public' }] });
  });

  it('fails closed on a list answer it cannot read', async () => {
    for (const result of [{ tools: 'weather,rm_rf' }, { tools: { weather: {} } }, 'H4sIAAAA', null, {}]) {
      const answer = await policy.onServerResponse!(
        { jsonrpc: '2.0', id: 7, result } as never,
        { jsonrpc: '2.0', id: 7, method: 'tools/list' },
        ctx('alice'),
      );
      expect(answer.result).toBeUndefined();
      expect(answer.error?.message).toMatch(/tools\/list could not be read/);
    }
  });

  it('decides by the member behind an aggregate endpoint, on calls and on list items, and records it', async () => {
    const members: Record<string, string> = { now: 'time', fetch: 'web', 'res://a': 'time', p: 'web' };
    const resolved: string[] = [];
    const aggregate = createAuthzPolicy(
      new CedarAuthorizer(
        validateAuthzConfig(
          {
            type: 'cedarv1',
            cedar: {
              policies: [
                'permit(principal, action, resource) when { context has backend && context.backend == "time" };',
              ],
            },
          },
          'test',
        ),
      ),
      (kind, name) => {
        resolved.push(`${kind}:${name}`);
        if (name === 'boom') throw new Error('resolver failed');
        return members[name];
      },
    );
    const exchange: { backend?: string } = {};
    const withExchange = { ...ctx('alice'), exchange };
    expect((await aggregate.onClientMessage!(call('tools/call', { name: 'now' }), withExchange)).action).toBe(
      'allow',
    );
    expect(exchange.backend).toBe('time');
    expect(
      (await aggregate.onClientMessage!(call('tools/call', { name: 'fetch' }), withExchange)).action,
    ).toBe('deny');
    expect(exchange.backend).toBe('web');
    expect(
      (await aggregate.onClientMessage!(call('tools/call', { name: 'unknown' }), ctx('alice'))).action,
    ).toBe('deny');
    expect(
      (await aggregate.onClientMessage!(call('tools/call', { name: 'boom' }), ctx('alice'))).action,
    ).toBe('deny');
    expect(
      (await aggregate.onClientMessage!(call('resources/read', { uri: 'res://a' }), ctx('alice'))).action,
    ).toBe('allow');
    const complete = call('completion/complete', {
      ref: { type: 'ref/prompt', name: 'p' },
      argument: { name: 'a', value: 'x' },
    });
    expect((await aggregate.onClientMessage!(complete, ctx('alice'))).action).toBe('deny');
    expect(resolved).toEqual([
      'tool:now',
      'tool:fetch',
      'tool:unknown',
      'tool:boom',
      'resource:res://a',
      'prompt:p',
    ]);
    const listed = await aggregate.onServerResponse!(
      { jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'now' }, { name: 'fetch' }, { name: 'unknown' }] } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      ctx('alice'),
    );
    expect(listed.result).toEqual({ tools: [{ name: 'now' }] });
  });
});
