import { afterEach, describe, expect, it } from 'vitest';
import type { Identity } from '../../../mcp/identity.js';
import { MemorySessionStore } from '../../sessions/memory.js';
import {
  BackendSessions,
  BRIDGE_SESSION_PREFIX,
  bridgeSessionId,
  type BackendSessionOpener,
} from './backend-sessions.js';
import { envelopeRefusal } from './envelope.js';
import { BackendEras, discoverShowsStateless, hasStatelessEnvelope } from '../decision.js';
import { acknowledgement, filterAccepts, honoredFilter, stamped } from './listen.js';
import { QueuedCall, type InputBroker } from './seam.js';
import { discoverResult, logPasses, toSessionEraRequest, toStatelessResponse } from './translate.js';

const MODERN = '2026-07-28';
const user = (subject: string, iss = 'https://idp.example'): Identity => ({
  subject,
  groups: [],
  claims: { iss },
  local: false,
});
const local: Identity = { subject: 'local', groups: [], claims: {}, local: true };
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('era detection', () => {
  it('is stateless only for a discover result listing 2026-07-28', () => {
    expect(discoverShowsStateless({ jsonrpc: '2.0', id: 1, result: { supportedVersions: [MODERN] } })).toBe(
      true,
    );
    expect(discoverShowsStateless({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'x' } })).toBe(
      false,
    );
    expect(discoverShowsStateless(undefined)).toBe(false);
  });

  it('detects once at a time, caches success and retries after a failure', async () => {
    let calls = 0;
    let fail = true;
    const eras = new BackendEras(async () => {
      calls += 1;
      await Promise.resolve();
      if (fail) throw new Error('unreachable');
      return false;
    });
    await expect(Promise.all([eras.statelessRoute(), eras.statelessRoute()])).rejects.toThrow('unreachable');
    expect(calls).toBe(1);
    fail = false;
    expect(await eras.statelessRoute()).toBe('bridged');
    expect(await eras.statelessRoute()).toBe('bridged');
    expect(eras.knownStateless).toBe(false);
    expect(calls).toBe(2);
    // Contradicted (upgraded in place): asked again.
    eras.forgetStateless();
    expect(eras.knownStateless).toBeUndefined();
    expect(await eras.statelessRoute()).toBe('bridged');
    expect(calls).toBe(3);
  });
});

describe('translation', () => {
  it('drops the 2026 envelope keys from _meta and keeps the others', () => {
    const request = {
      jsonrpc: '2.0' as const,
      id: 1,
      method: 'tools/call',
      params: { name: 'x', _meta: { ...envelope, progressToken: 7 } },
    };
    expect(toSessionEraRequest(request).params).toEqual({ name: 'x', _meta: { progressToken: 7 } });
    expect(toSessionEraRequest({ ...request, params: { _meta: envelope } }).params).toEqual({});
  });

  it('stamps resultType, caching fields and serverInfo, and strips deleted vocabulary', () => {
    const info = { name: 's', version: '1' };
    const list = toStatelessResponse(
      'tools/list',
      { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 't', execution: { taskSupport: 'optional' } }] } },
      info,
    );
    expect(list.result).toEqual({
      tools: [{ name: 't' }],
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': info },
    });
    const call = toStatelessResponse(
      'tools/call',
      { jsonrpc: '2.0', id: 2, result: { content: [] } },
      undefined,
    );
    expect(call.result).toEqual({ content: [], resultType: 'complete' });
    const miss = toStatelessResponse(
      'resources/read',
      { jsonrpc: '2.0', id: 3, error: { code: -32002, message: 'no' } },
      info,
    );
    expect(miss.error?.code).toBe(-32602);
  });

  it('answers server/discover from an initialize result', () => {
    const result = discoverResult({
      protocolVersion: '2025-11-25',
      capabilities: { tools: {}, tasks: { list: {} } },
      serverInfo: { name: 's', version: '1' },
      instructions: 'use it',
    });
    expect(result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: {} },
      instructions: 'use it',
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's' } },
    });
    expect(result.capabilities).not.toHaveProperty('tasks');
  });

  it('passes log messages at or above the requested level', () => {
    expect(logPasses('warning', 'info')).toBe(true);
    expect(logPasses('debug', 'info')).toBe(false);
  });
});

describe('envelope checks', () => {
  const request = (method: string, meta?: Record<string, unknown>) => ({
    jsonrpc: '2.0' as const,
    id: 9,
    method,
    params: meta === undefined ? {} : { _meta: meta },
  });
  it.each([
    ['ping', envelope, MODERN, 404, -32601],
    ['tools/list', undefined, MODERN, 400, -32602],
    [
      'tools/list',
      { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
      MODERN,
      400,
      -32020,
    ],
    ['tools/list', { ...envelope, 'io.modelcontextprotocol/protocolVersion': 'v9' }, 'v9', 400, -32022],
  ])('refuses %s (%j, header %s) with %i / %i', (method, meta, header, status, code) => {
    const refusal = envelopeRefusal(request(method, meta), header);
    expect(refusal?.httpStatus).toBe(status);
    expect(refusal?.rpcError.code).toBe(code);
    expect(refusal?.id).toBe(9);
  });
  it('accepts a complete envelope', () => {
    expect(envelopeRefusal(request('tools/list', envelope), MODERN)).toBeUndefined();
  });
  it('tells a 2026 envelope from a 2025 request', () => {
    expect(
      hasStatelessEnvelope(request('tools/list', { 'io.modelcontextprotocol/protocolVersion': 'v9' })),
    ).toBe(true);
    expect(hasStatelessEnvelope(request('initialize', { progressToken: 1 }))).toBe(false);
    expect(hasStatelessEnvelope(request('initialize'))).toBe(false);
  });
});

describe('subscriptions/listen filters', () => {
  const listen = (notifications: unknown) => ({
    jsonrpc: '2.0' as const,
    id: 'L',
    method: 'subscriptions/listen',
    params: { notifications },
  });
  it('honors only what the server can deliver', () => {
    const capabilities = { tools: { listChanged: true }, resources: { subscribe: true } };
    const filter = honoredFilter(
      listen({ toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ['a://x'] }),
      capabilities,
    );
    expect(filter).toEqual({ toolsListChanged: true, resourceSubscriptions: ['a://x'] });
    expect(honoredFilter(listen('nope'), capabilities)).toMatchObject({ error: { code: -32602 } });
  });
  it('accepts, stamps and acknowledges', () => {
    const filter = { resourceSubscriptions: ['a://x'] };
    const updated = (uri: string) => ({
      jsonrpc: '2.0' as const,
      method: 'notifications/resources/updated',
      params: { uri },
    });
    expect(filterAccepts(filter, updated('a://x'))).toBe(true);
    expect(filterAccepts(filter, updated('a://y'))).toBe(false);
    expect(filterAccepts(filter, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' })).toBe(false);
    expect(stamped(updated('a://x'), listen({})).params?._meta).toEqual({
      'io.modelcontextprotocol/subscriptionId': 'L',
    });
    expect(acknowledgement(filter, listen({}))).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: filter },
    });
  });
});

describe('backend sessions per principal', () => {
  const stores: MemorySessionStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  const store = () => {
    const s = new MemorySessionStore({ ttlMs: 60_000 });
    stores.push(s);
    return s;
  };
  const opener = (ids: string[], closed: string[] = []): BackendSessionOpener => ({
    open: () => {
      const id = `backend-${ids.length + 1}`;
      ids.push(id);
      return Promise.resolve({ backendSessionId: id, init: { serverInfo: { name: 's' } } });
    },
    close: (_identity, id) => {
      closed.push(id);
      return Promise.resolve();
    },
  });

  it('keys sessions by issuer and subject, anonymous apart, never like a client id', () => {
    expect(bridgeSessionId(user('a'))).not.toBe(bridgeSessionId(user('b')));
    expect(bridgeSessionId(user('a', 'https://one'))).not.toBe(bridgeSessionId(user('a', 'https://two')));
    expect(bridgeSessionId(local).startsWith(BRIDGE_SESSION_PREFIX)).toBe(true);
  });

  it('opens one session per principal, even for concurrent first requests, and reopens after forget', async () => {
    const sessions = new BackendSessions(store());
    const ids: string[] = [];
    const o = opener(ids);
    const [a1, a2] = await Promise.all([sessions.get(user('a'), o), sessions.get(user('a'), o)]);
    const b = await sessions.get(user('b'), o);
    expect(a1.backendSessionId).toBe(a2.backendSessionId);
    expect(b.backendSessionId).not.toBe(a1.backendSessionId);
    expect(ids).toHaveLength(2);
    await sessions.forget(user('a'), a1.backendSessionId);
    expect((await sessions.get(user('a'), o)).backendSessionId).toBe('backend-3');
  });

  it('uses the session another replica stored first and ends its own', async () => {
    const shared = store();
    const closed: string[] = [];
    const ids: string[] = [];
    const first = await new BackendSessions(shared).get(user('a'), opener(ids));
    // A second replica that raced: its first get() found nothing, then its create lost.
    const racing = new BackendSessions({
      create: (r: never) => shared.create(r),
      get: (() => {
        let calls = 0;
        return (id: string) => (calls++ === 0 ? Promise.resolve(undefined) : shared.get(id));
      })(),
      update: () => Promise.resolve(),
      delete: () => Promise.resolve(),
      close: () => Promise.resolve(),
    });
    const got = await racing.get(user('a'), opener(ids, closed));
    expect(got.backendSessionId).toBe(first.backendSessionId);
    expect(closed).toEqual(['backend-2']);
  });
});

describe('QueuedCall', () => {
  class TestCall extends QueuedCall {
    answered: unknown[] = [];
    cancelled: string[] = [];
    answer(id: string | number, answer: unknown): void {
      this.answered.push({ id, answer });
    }
    cancel(reason: string): void {
      this.cancelled.push(reason);
    }
  }
  const request = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: {} };
  const elicit = { id: 'e1', method: 'elicitation/create' as const, params: {} };

  it('refuses undeclared input kinds with -32021 and cancels the backend request', async () => {
    const call = new TestCall(request, local, {});
    call.events.push({ kind: 'input', input: elicit });
    const response = await call.settle(undefined);
    expect(response.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
    expect(call.httpStatus).toBe(400);
    expect(call.cancelled).toHaveLength(1);
  });

  it('refuses declared input without a broker and waits for the final answer', async () => {
    const call = new TestCall(request, local, { elicitation: {} });
    call.events.push({ kind: 'input', input: elicit });
    call.events.push({
      kind: 'final',
      response: { jsonrpc: '2.0', id: 1, result: { resultType: 'complete' } },
    });
    expect((await call.settle(undefined)).result).toEqual({ resultType: 'complete' });
    expect(call.answered).toMatchObject([{ id: 'e1', answer: { error: { code: -32601 } } }]);
  });

  it('hands the call to a broker at the first input request', async () => {
    const call = new TestCall(request, local, { elicitation: {} });
    const broker: InputBroker = {
      capabilities: { elicitation: {} },
      takeOver: (taken, first) =>
        Promise.resolve({
          jsonrpc: '2.0',
          id: taken.request.id,
          result: { resultType: 'input_required', first: first.id },
        }),
    };
    call.events.push({ kind: 'input', input: elicit });
    expect((await call.settle(broker)).result).toEqual({ resultType: 'input_required', first: 'e1' });
    expect(call.takenOver).toBe(true);
  });
});
