import { describe, expect, it } from 'vitest';
import { localContext } from '../../test/support/message-context.js';
import type { JsonRpcMessage, JsonRpcRequest } from './jsonrpc.js';
import {
  ALLOW,
  runClientPolicies,
  runServerPolicies,
  inspectsResponses,
  needsResponse,
  screenServerMessage,
  type ClientVerdict,
  type MessagePolicy,
} from './policy.js';

const ctx = localContext;
const request: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

function tagging(name: string, trail: string[]): MessagePolicy {
  return {
    name,
    onClientMessage: (message) => {
      trail.push(`client:${name}`);
      return {
        action: 'rewrite',
        message: {
          ...message,
          params: { ...('params' in message ? message.params : {}), [name]: true },
        } as typeof message,
      };
    },
    onServerResponse: (response) => {
      trail.push(`server:${name}`);
      return { ...response, result: { ...(response.result as object), [name]: true } };
    },
  };
}

describe('policy chains', () => {
  it('runs client hooks in order and server hooks in reverse order, passing rewrites along', async () => {
    const trail: string[] = [];
    const policies = [tagging('a', trail), tagging('b', trail)];
    const verdict = await runClientPolicies(policies, request, ctx);
    expect(verdict).toEqual({
      action: 'forward',
      message: { ...request, params: { a: true, b: true } },
      rewritten: true,
    });
    const response = await runServerPolicies(policies, { jsonrpc: '2.0', id: 1, result: {} }, request, ctx);
    expect(response.result).toEqual({ a: true, b: true });
    expect(trail).toEqual(['client:a', 'client:b', 'server:b', 'server:a']);
  });

  it('stops at the first rejection and names the policy', async () => {
    const trail: string[] = [];
    const deny: MessagePolicy = {
      name: 'deny',
      onClientMessage: () => ({
        action: 'deny',
        reason: 'forbidden',
        error: { code: -32600, message: 'no' },
      }),
    };
    const verdict = await runClientPolicies([deny, tagging('after', trail)], request, ctx);
    expect(verdict).toEqual({
      action: 'deny',
      reason: 'forbidden',
      error: { code: -32600, message: 'no' },
      policy: 'deny',
    });
    expect(trail).toEqual([]);
  });

  it('skips policies without the hook and reports whether responses need parsing', async () => {
    const clientOnly: MessagePolicy = {
      name: 'c',
      onClientMessage: () => ALLOW,
    };
    expect(inspectsResponses([clientOnly])).toBe(false);
    expect(inspectsResponses([clientOnly, tagging('x', [])])).toBe(true);
    const response = { jsonrpc: '2.0' as const, id: 1, result: { same: true } };
    expect(await runServerPolicies([clientOnly], response, request, ctx)).toBe(response);
  });

  it('needs an answer parsed when a policy with a server hook wants it or has no screen', () => {
    const clientOnly: MessagePolicy = { name: 'c', onClientMessage: () => ALLOW, needsResponse: () => true };
    const screened = (wanted: string): MessagePolicy => ({
      name: `s-${wanted}`,
      onServerResponse: (response) => response,
      needsResponse: (method) => method === wanted,
    });
    // A screen on a policy without a server hook does not count.
    expect(needsResponse([clientOnly], 'tools/list', '{}')).toBe(false);
    expect(needsResponse([clientOnly, screened('tools/list')], 'tools/call', '{}')).toBe(false);
    expect(needsResponse([screened('tools/list'), screened('tools/call')], 'tools/call', '{}')).toBe(true);
    // A server hook without a screen needs every answer.
    expect(needsResponse([screened('tools/list'), tagging('x', [])], 'ping', '{}')).toBe(true);
  });

  it('forwards the message itself, not a copy, when every policy allows it', async () => {
    const verdict = await runClientPolicies([{ name: 'ok', onClientMessage: () => ALLOW }], request, ctx);
    expect(verdict).toEqual({ action: 'forward', message: request, rewritten: false });
    expect(verdict.action === 'forward' && verdict.message).toBe(request);
  });

  it('decides without a promise when every policy answers synchronously', () => {
    const verdict = runClientPolicies([tagging('a', []), tagging('b', [])], request, ctx);
    expect(verdict).not.toBeInstanceOf(Promise);
    expect(verdict).toMatchObject({ action: 'forward', rewritten: true });
  });

  it('runs the rest of the chain on what an asynchronous policy decided', async () => {
    const trail: string[] = [];
    const later = (name: string, verdict: (m: JsonRpcMessage) => ClientVerdict): MessagePolicy => ({
      name,
      onClientMessage: async (message) => {
        await new Promise((resolve) => setImmediate(resolve));
        trail.push(`client:${name}`);
        return verdict(message);
      },
    });
    const renamed = later('rename', (m) => ({
      action: 'rewrite',
      message: { ...m, method: 'tools/call' } as JsonRpcMessage,
    }));
    const forward = runClientPolicies([tagging('a', trail), renamed, tagging('b', trail)], request, ctx);
    expect(forward).toBeInstanceOf(Promise);
    expect(await forward).toEqual({
      action: 'forward',
      message: { ...request, method: 'tools/call', params: { a: true, b: true } },
      rewritten: true,
    });
    expect(trail).toEqual(['client:a', 'client:rename', 'client:b']);

    const refused = later('refuse', () => ({
      action: 'deny',
      reason: 'forbidden',
      error: { code: 1, message: 'no' },
    }));
    trail.length = 0;
    expect(await runClientPolicies([refused, tagging('after', trail)], request, ctx)).toMatchObject({
      action: 'deny',
      policy: 'refuse',
    });
    expect(trail).toEqual(['client:refuse']);
    const allowed = later('allow', () => ALLOW);
    expect(await runClientPolicies([allowed], request, ctx)).toEqual({
      action: 'forward',
      message: request,
      rewritten: false,
    });
  });
});

describe('server-originated messages', () => {
  const sampling = {
    jsonrpc: '2.0' as const,
    id: 'srv-1',
    method: 'sampling/createMessage',
    params: { n: 1 },
  };
  const trail: string[] = [];
  const policy = (name: string, refuse: boolean): MessagePolicy => ({
    name,
    onServerMessage: (message) => {
      trail.push(name);
      if (refuse) return { action: 'deny', error: { code: -32050, message: `${name} refused` } };
      return { action: 'rewrite', message: { ...message, params: { ...message.params, [name]: true } } };
    },
  });

  it('run bottom to top; a refused request is answered to the server, the client gets nothing', () => {
    trail.length = 0;
    const answers: unknown[] = [];
    const passed = screenServerMessage([policy('a', true), policy('b', false)], sampling, ctx, (a) =>
      answers.push(a),
    );
    expect(passed).toBeUndefined();
    expect(trail).toEqual(['b', 'a']);
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 'srv-1', error: { code: -32050, message: 'a refused' } }]);
  });

  it('pass rewritten; a refused notification is dropped with no answer', () => {
    expect(screenServerMessage([policy('b', false)], sampling, ctx, () => {})).toEqual({
      ...sampling,
      params: { n: 1, b: true },
    });
    const answers: unknown[] = [];
    const log = { jsonrpc: '2.0' as const, method: 'notifications/message', params: {} };
    expect(screenServerMessage([policy('a', true)], log, ctx, (a) => answers.push(a))).toBeUndefined();
    expect(answers).toEqual([]);
  });

  it('make a stream that may carry one be parsed, by the raw text alone', () => {
    const screens = [policy('a', false)];
    expect(inspectsResponses(screens)).toBe(true);
    expect(needsResponse(screens, 'tools/call', '{"jsonrpc":"2.0","method":"notifications/message"}')).toBe(
      true,
    );
    expect(needsResponse(screens, 'tools/call', '{"jsonrpc":"2.0","id":1,"result":{}}')).toBe(false);
  });
});
