/**
 * The multiplexer's bookkeeping, driven directly: the "server" is a recorder of the lines the
 * multiplexer writes upstream, answered by the test (the real stdio server is exercised in
 * test/integration/proxy/stdio-*.test.ts).
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Multiplexer } from './mux.js';
import { MuxSession } from './session.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../mcp/jsonrpc.js';
import type { MessageContext, MessagePolicy } from '../../mcp/policy.js';
import type { RequestSink } from '../pipeline/answer-sink.js';

const ctx: MessageContext = {
  identity: { subject: 'local', groups: [], claims: {}, local: true },
  serverName: 't',
  transport: 'streamable-http',
  clientAddress: '127.0.0.1',
  headers: {},
};

/**
 * The recorder answers the era probe as a 2025-era server does (method not found), or as a
 * 2026-07-28 server when `modern`; `sent` omits it.
 */
function setup(timeoutMs = 60_000, modern = false, policies: MessagePolicy[] = []) {
  const sent: JsonRpcMessage[] = [];
  const mux: Multiplexer = new Multiplexer({
    send: (m) => {
      if (modern && 'method' in m && m.method === 'initialize' && 'id' in m) {
        // A 2026-only server refuses a 2025-era initialize.
        const id = m.id;
        const error = { code: -32022, message: 'Unsupported protocol version: 2025-11-25' };
        queueMicrotask(() => mux.onUpstreamMessage({ jsonrpc: '2.0', id, error }));
      } else if ('method' in m && m.method === 'server/discover' && 'id' in m) {
        const id = m.id;
        const discovered = {
          supportedVersions: ['2026-07-28'],
          capabilities: { tools: { listChanged: true } },
        };
        queueMicrotask(() =>
          mux.onUpstreamMessage(
            modern
              ? { jsonrpc: '2.0', id, result: discovered }
              : { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } },
          ),
        );
      } else {
        sent.push(m);
      }
      return true;
    },
    policies,
    requestTimeoutMs: timeoutMs,
    logger: pino({ level: 'silent' }),
  });
  const last = () =>
    sent[sent.length - 1] as unknown as Record<string, unknown> & {
      id?: number;
      params: { _meta: { progressToken: unknown } };
    };
  return { mux, sent, last };
}

/** Lets the answers the fake server gives by itself arrive. */
const probed = () => new Promise((resolve) => setImmediate(resolve));

function sink() {
  const responses: Array<{ response: JsonRpcResponse; status?: number }> = [];
  const related: JsonRpcMessage[] = [];
  const s: RequestSink = {
    related: (m) => (related.push(m), true),
    respond: (response, status) => responses.push({ response, status }),
  };
  return { s, responses, related };
}

function session(id: string, capabilities?: Record<string, unknown>): MuxSession {
  const s = new MuxSession(id, 'streamable-http');
  s.capabilities = capabilities;
  return s;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Multiplexer', () => {
  it('initializes the server once and answers later sessions from the cache with their version', async () => {
    const { mux, sent } = setup();
    const first = mux.initialize({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { sampling: {} },
        clientInfo: { name: 'a', version: '1' },
      },
    });
    const second = mux.initialize({
      jsonrpc: '2.0',
      id: 'x',
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'b', version: '1' } },
    });
    await probed();
    expect(sent).toHaveLength(1);
    const upstream = sent[0] as unknown as {
      id: number;
      params: { clientInfo: { name: string }; capabilities: Record<string, unknown> };
    };
    expect(upstream.params.clientInfo.name).toBe('a');
    // Sampling and elicitation are routable to later sessions, so the server hears of both.
    expect(upstream.params.capabilities).toEqual({ sampling: {}, elicitation: {} });
    mux.onUpstreamMessage({
      jsonrpc: '2.0',
      id: upstream.id,
      result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } },
    });
    expect((await first).protocolVersion).toBe('2025-11-25');
    expect((await second).protocolVersion).toBe('2025-03-26');
    expect(sent.map((m) => ('method' in m ? m.method : 'response'))).toEqual([
      'initialize',
      'notifications/initialized',
    ]);
    // A client asking for a version the server did not negotiate gets the server's.
    const newer = await mux.initialize({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2099-01-01' },
    });
    expect(newer.protocolVersion).toBe('2025-11-25');
  });

  it('rewrites ids and progress tokens upstream and restores them exactly', () => {
    const { mux, sent, last } = setup();
    const a = session('a');
    const b = session('b');
    mux.addSession(a);
    mux.addSession(b);
    const sa = sink();
    const sb = sink();
    mux.forwardRequest(
      a,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { progressToken: 1 } } },
      sa.s,
      ctx,
    );
    const upA = last();
    mux.forwardRequest(
      b,
      { jsonrpc: '2.0', id: '1', method: 'tools/call', params: { _meta: { progressToken: 1 } } },
      sb.s,
      ctx,
    );
    const upB = last();
    expect(upA.id).not.toBe(upB.id);
    expect(upA.params._meta.progressToken).not.toBe(upB.params._meta.progressToken);

    mux.onUpstreamMessage({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: upB.params._meta.progressToken, progress: 5 },
    });
    expect(sb.related).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 5 } },
    ]);
    expect(sa.related).toEqual([]);

    mux.onUpstreamMessage({ jsonrpc: '2.0', id: upB.id as number, result: { b: true } });
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: upA.id as number, result: { a: true } });
    expect(sb.responses[0]?.response).toEqual({ jsonrpc: '2.0', id: '1', result: { b: true } });
    expect(sa.responses[0]?.response).toEqual({ jsonrpc: '2.0', id: 1, result: { a: true } });
    expect(sent.filter((m) => 'id' in m)).toHaveLength(2);
  });

  it('times out a request: a JSON-RPC error with 504 and a cancellation upstream', () => {
    vi.useFakeTimers();
    const { mux, last } = setup(1000);
    const a = session('a');
    mux.addSession(a);
    const sa = sink();
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 9, method: 'tools/call' }, sa.s, ctx);
    const upstreamId = last().id;
    vi.advanceTimersByTime(1001);
    expect(sa.responses[0]?.status).toBe(504);
    expect(sa.responses[0]?.response.error?.message).toBe(
      'Upstream timeout: the MCP backend did not answer within 1000 ms (upstream timeout)',
    );
    expect(last()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: upstreamId, reason: 'timeout' },
    });
    // A late answer is dropped.
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: upstreamId as number, result: {} });
    expect(sa.responses).toHaveLength(1);
  });

  it('bounds the health ping by its own timeout and drops it, whatever the request bound', async () => {
    vi.useFakeTimers();
    const { mux, last } = setup(60_000);
    const outcome = mux.ping(500);
    // The era first: Moat's own initialize, which a 2025 server accepts; then the ping.
    expect(last()).toMatchObject({ method: 'initialize' });
    mux.onUpstreamMessage({
      jsonrpc: '2.0',
      id: last().id as number,
      result: { protocolVersion: '2025-11-25' },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(last()).toMatchObject({ method: 'ping' });
    const pingId = last().id;
    vi.advanceTimersByTime(501);
    await expect(outcome).resolves.toEqual({
      error: 'Upstream timeout: the MCP backend did not answer within 500 ms (upstream timeout)',
    });
    expect(last()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: pingId, reason: 'timeout' },
    });
  });

  it('attributes a server request to the only session with an interactive request in flight', () => {
    const { mux, sent, last } = setup();
    const a = session('a', { sampling: {} });
    const b = session('b', { sampling: {} });
    mux.addSession(a);
    mux.addSession(b);
    const sa = sink();
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 1, method: 'tools/call' }, sa.s, ctx);
    mux.forwardRequest(b, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, sink().s, ctx); // not interactive
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 'srv-1', method: 'sampling/createMessage', params: {} });
    expect(sa.related).toEqual([
      { jsonrpc: '2.0', id: 'srv-1', method: 'sampling/createMessage', params: {} },
    ]);
    // Only a's answer is accepted, and it goes upstream with the server's id.
    expect(mux.forwardClientResponse(b, { jsonrpc: '2.0', id: 'srv-1', result: {} })).toBe(false);
    expect(mux.forwardClientResponse(a, { jsonrpc: '2.0', id: 'srv-1', result: { ok: 1 } })).toBe(true);
    expect(last()).toEqual({ jsonrpc: '2.0', id: 'srv-1', result: { ok: 1 } });
    expect(sent.length).toBe(3);
  });

  it('refuses ambiguous server requests and answers server pings itself', () => {
    const { mux, last } = setup();
    const a = session('a', {});
    const b = session('b', {});
    mux.addSession(a);
    mux.addSession(b);
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 1, method: 'tools/call' }, sink().s, ctx);
    mux.forwardRequest(b, { jsonrpc: '2.0', id: 1, method: 'prompts/get' }, sink().s, ctx);
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 7, method: 'elicitation/create', params: {} });
    expect(last()).toMatchObject({
      id: 7,
      error: { code: -32603, message: expect.stringMatching(/could not attribute/) },
    });
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 8, method: 'ping' });
    expect(last()).toEqual({ jsonrpc: '2.0', id: 8, result: {} });
  });

  it('leaves out a session waiting for its client (an MRTR round held) while another one works', () => {
    const { mux, last } = setup();
    const held = session('held', { elicitation: {} });
    const working = session('working', { elicitation: {} });
    mux.addSession(held);
    mux.addSession(working);
    const sh = sink();
    const sw = sink();
    mux.forwardRequest(held, { jsonrpc: '2.0', id: 1, method: 'tools/call' }, sh.s, ctx);
    mux.forwardRequest(working, { jsonrpc: '2.0', id: 1, method: 'tools/call' }, sw.s, ctx);
    mux.waitForClient(held, true);
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 'e1', method: 'elicitation/create', params: {} });
    expect(sw.related).toEqual([{ jsonrpc: '2.0', id: 'e1', method: 'elicitation/create', params: {} }]);
    expect(sh.related).toEqual([]);
    // Resumed, the held call works again: the server's next request is ambiguous once more.
    mux.waitForClient(held, false);
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 'e2', method: 'elicitation/create', params: {} });
    expect(last()).toMatchObject({
      id: 'e2',
      error: { message: expect.stringMatching(/could not attribute/) },
    });
    // Two sessions waiting and none working: still refused, never guessed.
    mux.waitForClient(held, true);
    mux.waitForClient(working, true);
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 'e3', method: 'elicitation/create', params: {} });
    expect(last()).toMatchObject({
      id: 'e3',
      error: { message: expect.stringMatching(/could not attribute/) },
    });
  });

  it('ending a session cancels its requests upstream and refuses the server requests waiting on it', () => {
    const { mux, sent } = setup();
    const a = session('a', { roots: {} });
    mux.addSession(a);
    const sa = sink();
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 1, method: 'tools/call' }, sa.s, ctx);
    const upstreamId = (sent[0] as { id: number }).id;
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 'r', method: 'roots/list' });
    mux.endSession(a, 'gone');
    expect(sent.slice(1)).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: upstreamId, reason: 'gone' },
      },
      { jsonrpc: '2.0', id: 'r', error: { code: -32603, message: 'The client session ended (gone)' } },
    ]);
    expect(sa.responses[0]?.response.error?.message).toBe('gone');
  });

  it('reference-counts resource subscriptions upstream', () => {
    const { mux, sent } = setup();
    const a = session('a');
    const b = session('b');
    mux.addSession(a);
    mux.addSession(b);
    const subscribe = (s: MuxSession) => {
      const k = sink();
      mux.forwardRequest(
        s,
        { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'u' } },
        k.s,
        ctx,
      );
      return k;
    };
    subscribe(a);
    const up = sent[0] as { id: number };
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: up.id, result: {} });
    const second = subscribe(b); // answered locally
    expect(second.responses[0]?.response).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(sent).toHaveLength(1);

    const channelA: JsonRpcMessage[] = [];
    a.channel = { send: (m) => (channelA.push(m), true), close: () => {} };
    mux.onUpstreamMessage({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'u' },
    });
    expect(channelA).toHaveLength(1);

    mux.endSession(a, 'bye');
    expect(sent).toHaveLength(1); // b still subscribed
    mux.endSession(b, 'bye');
    expect(sent[1]).toMatchObject({ method: 'resources/unsubscribe', params: { uri: 'u' } });
  });

  it('delivers an update the server sends before its subscribe answer, and forgets a refused subscription', () => {
    const { mux, sent } = setup();
    const a = session('a');
    mux.addSession(a);
    const channelA: JsonRpcMessage[] = [];
    a.channel = { send: (m) => (channelA.push(m), true), close: () => {} };
    const subscribe = (uri: string) =>
      mux.forwardRequest(
        a,
        { jsonrpc: '2.0', id: uri, method: 'resources/subscribe', params: { uri } },
        sink().s,
        ctx,
      );
    const updated = (uri: string) =>
      mux.onUpstreamMessage({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });

    subscribe('u');
    updated('u'); // before the answer
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: (sent[0] as { id: number }).id, result: {} });
    expect(channelA).toMatchObject([{ params: { uri: 'u' } }]);

    subscribe('refused');
    mux.onUpstreamMessage({
      jsonrpc: '2.0',
      id: (sent[1] as { id: number }).id,
      error: { code: -32602, message: 'no such resource' },
    });
    updated('refused');
    expect(channelA).toHaveLength(1);
    expect(a.subscriptions).toEqual(new Set(['u']));
  });

  it('keeps log levels per session and tells the server only the most verbose one', async () => {
    const { mux, sent, last } = setup();
    const init = mux.initialize({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    await probed();
    mux.onUpstreamMessage({
      jsonrpc: '2.0',
      id: (sent[0] as { id: number }).id,
      result: { protocolVersion: '2025-11-25', capabilities: { logging: {} } },
    });
    await init;
    const a = session('a');
    const b = session('b');
    mux.addSession(a);
    mux.addSession(b);
    const setLevel = (s: MuxSession, level: string) => {
      const k = sink();
      mux.forwardRequest(
        s,
        { jsonrpc: '2.0', id: 5, method: 'logging/setLevel', params: { level } },
        k.s,
        ctx,
      );
      return k.responses[0]?.response;
    };
    expect(setLevel(a, 'warning')).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    expect(last()).toMatchObject({ method: 'logging/setLevel', params: { level: 'warning' } });
    const count = sent.length;
    expect(setLevel(b, 'error')).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    expect(sent).toHaveLength(count); // warning is already more verbose than error
    expect(setLevel(b, 'loud')?.error?.code).toBe(-32602);

    const sa = sink();
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 6, method: 'tools/call' }, sa.s, ctx);
    for (const level of ['info', 'warning', 'error']) {
      mux.onUpstreamMessage({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level, data: level },
      });
    }
    expect(sa.related.map((m) => ('params' in m ? m.params?.level : undefined))).toEqual([
      'warning',
      'error',
    ]);
  });

  it('lets a session-less client answer a server request on a new request', () => {
    const { mux, last } = setup();
    const call = new MuxSession('', 'streamable-http', true);
    const answer = new MuxSession('', 'streamable-http', true);
    const stateful = session('s');
    for (const s of [call, answer, stateful]) mux.addSession(s);
    const k = sink();
    mux.forwardRequest(call, { jsonrpc: '2.0', id: 1, method: 'tools/call' }, k.s, ctx);
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: 3, method: 'roots/list' });
    expect(k.related).toHaveLength(1);
    expect(mux.forwardClientResponse(stateful, { jsonrpc: '2.0', id: 3, result: { roots: [] } })).toBe(false);
    expect(mux.forwardClientResponse(answer, { jsonrpc: '2.0', id: 3, result: { roots: [] } })).toBe(true);
    expect(last()).toEqual({ jsonrpc: '2.0', id: 3, result: { roots: [] } });
  });

  it('learns a 2026-only server from its refused initialize, and routes listen notifications by its own ids only', async () => {
    const { mux, sent } = setup(60_000, true);
    await mux.ensureInitialized();
    expect(mux.knownStateless).toBe(true);
    const envelope = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };
    const [a, b] = [new MuxSession('', 'streamable-http', true), new MuxSession('', 'streamable-http', true)];
    const [la, lb] = [sink(), sink()];
    for (const [s, k] of [
      [a, la],
      [b, lb],
    ] as const) {
      mux.addSession(s);
      // Both clients use the same id: only the upstream ids tell them apart.
      const listen = { notifications: { toolsListChanged: true }, ...envelope };
      mux.forwardRequest(
        s,
        { jsonrpc: '2.0', id: 'l', method: 'subscriptions/listen', params: listen },
        k.s,
        ctx,
      );
    }
    const [ida, idb] = sent.map((m) => (m as { id: number }).id);
    expect(ida).not.toBe(idb);
    const stamped = (id: unknown) => ({
      jsonrpc: '2.0' as const,
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': id } },
    });
    mux.onUpstreamMessage(stamped(idb));
    mux.onUpstreamMessage(stamped(9999));
    mux.onUpstreamMessage({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    expect(la.related).toEqual([]);
    expect(lb.related).toEqual([stamped('l')]);
    // A listen that ended gets nothing more, and the server is told.
    mux.endSession(b, 'closed');
    expect(sent[sent.length - 1]).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: idb },
    });
    mux.onUpstreamMessage(stamped(idb));
    expect(lb.related).toHaveLength(1);
    // A 2026-07-28 server has no ping: the health check asks server/discover.
    expect(await mux.ping(500)).toHaveProperty('ms');
    expect(sent.some((m) => 'method' in m && m.method === 'ping')).toBe(false);
  });

  it('runs the response policies on the answers they need, and hands the others over at once', async () => {
    // Like the tool filter: only tools/list answers are its business.
    const listsOnly: MessagePolicy = {
      name: 'lists-only',
      needsResponse: (method) => method === 'tools/list',
      onServerResponse: (response) => ({ ...response, result: { rewritten: true } }),
    };
    const { mux, last } = setup(60_000, false, [listsOnly]);
    const a = session('a');
    mux.addSession(a);
    const call = sink();
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 1, method: 'tools/call' }, call.s, ctx);
    const callAnswer = { jsonrpc: '2.0' as const, id: last().id as number, result: { content: [] } };
    mux.onUpstreamMessage(callAnswer, JSON.stringify(callAnswer));
    // Delivered in the same turn, untouched.
    expect(call.responses).toEqual([{ response: { ...callAnswer, id: 1 }, status: undefined }]);

    const list = sink();
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, list.s, ctx);
    const listAnswer = { jsonrpc: '2.0' as const, id: last().id as number, result: { tools: [] } };
    mux.onUpstreamMessage(listAnswer, JSON.stringify(listAnswer));
    await vi.waitFor(() => expect(list.responses).toHaveLength(1));
    expect(list.responses[0]?.response).toEqual({ jsonrpc: '2.0', id: 2, result: { rewritten: true } });

    // Without the line's text (a caller that does not pass it), every answer meets the policies.
    const untold = sink();
    mux.forwardRequest(a, { jsonrpc: '2.0', id: 3, method: 'tools/call' }, untold.s, ctx);
    mux.onUpstreamMessage({ jsonrpc: '2.0', id: last().id as number, result: {} });
    await vi.waitFor(() => expect(untold.responses).toHaveLength(1));
    expect(untold.responses[0]?.response.result).toEqual({ rewritten: true });
  });
});

describe("Multiplexer of a dual-era server's 2026-07-28 process (discoverOnly)", () => {
  function discoverOnly(answer: (id: number) => JsonRpcResponse) {
    const sent: JsonRpcMessage[] = [];
    const mux: Multiplexer = new Multiplexer({
      send: (m) => {
        sent.push(m);
        if ('method' in m && m.method === 'server/discover' && 'id' in m) {
          const id = m.id as number;
          queueMicrotask(() => mux.onUpstreamMessage(answer(id)));
        }
        return true;
      },
      policies: [],
      requestTimeoutMs: 60_000,
      logger: pino({ level: 'silent' }),
      discoverOnly: true,
    });
    return { mux, sent };
  }

  it('opens the process with server/discover, never initialize, and passes 2026 requests as sent', async () => {
    const { mux, sent } = discoverOnly((id) => ({
      jsonrpc: '2.0',
      id,
      result: { supportedVersions: ['2026-07-28'], capabilities: {} },
    }));
    await mux.ensureInitialized();
    expect(mux.knownStateless).toBe(true);
    expect(sent.map((m) => ('method' in m ? m.method : undefined))).toEqual(['server/discover']);
    const s = new MuxSession('', 'streamable-http', true);
    mux.addSession(s);
    const k = sink();
    const params = { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };
    mux.forwardRequest(s, { jsonrpc: '2.0', id: 'c', method: 'tools/call', params }, k.s, ctx);
    expect(sent[1]).toMatchObject({ method: 'tools/call', params });
    expect(sent.some((m) => 'method' in m && m.method === 'initialize')).toBe(false);
  });

  it('refuses a process that does not name 2026-07-28 in server/discover (502, with the reason)', async () => {
    const { mux, sent } = discoverOnly((id) => ({
      jsonrpc: '2.0',
      id,
      error: { code: -32601, message: 'Method not found' },
    }));
    await expect(mux.ensureInitialized()).rejects.toMatchObject({
      httpStatus: 502,
      message: expect.stringContaining('does not speak 2026-07-28: Method not found'),
    });
    expect(sent.some((m) => 'method' in m && m.method === 'initialize')).toBe(false);
  });
});
