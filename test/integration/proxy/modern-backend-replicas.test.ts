/**
 * A 2025-11-25 client (the real v1 SDK `Client`) in front of a 2026-07-28-only server (the real v2
 * SDK with `legacy: 'reject'`) through two proxy processes sharing one real Redis, with no sticky
 * sessions: a router in the client's `fetch` (a stand-in for a load balancer that spreads requests
 * without affinity) sends every POST carrying a JSON-RPC response to replica B and everything else
 * to replica A. The question (an `input_required` round turned into `elicitation/create`) is asked
 * on A's POST stream, the client's answer lands on B, and B hands it to A through Redis. The
 * session's GET stream may be held by either replica: it listens with the stored subscriptions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startModernOnlyBackend, WATCHED, type ModernBackend } from '../../support/modern-backends.js';
import {
  startRedisReplicas,
  stopProxyProcess,
  type ProxyProcess,
  type RedisReplicas,
} from '../../support/proxy-processes.js';

let backend: ModernBackend;
let replicas: RedisReplicas;
let a: ProxyProcess;
let b: ProxyProcess;

beforeAll(async () => {
  backend = await startModernOnlyBackend();
  replicas = await startRedisReplicas(backend.url);
  ({ a, b } = replicas);
}, 60_000);
afterAll(async () => {
  await replicas?.stop();
  await backend?.close();
});

/** Is this request body a JSON-RPC response (a client's answer to a server→client request)? */
function isAnswer(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  const message = JSON.parse(body) as Record<string, unknown>;
  return 'result' in message || 'error' in message;
}

/** A v1 client whose answers go to B and everything else to A; counts what reached B. */
async function connectSplit(): Promise<{ client: ClientV1; sessionId: string; answersOnB: () => number }> {
  let onB = 0;
  const route: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (isAnswer(init?.body)) {
      onB++;
      url.host = new URL(b.url).host;
    }
    return fetch(url, init);
  };
  const client = new ClientV1(
    { name: 'old-client', version: '1.2.3' },
    { capabilities: { elicitation: {} } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { fetch: route });
  await client.connect(transport);
  return { client, sessionId: transport.sessionId ?? '', answersOnB: () => onB };
}

const headersFor = (sessionId: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  'mcp-session-id': sessionId,
});

/** Starts `confirm` on A by hand and reads its stream until the question; returns the question's id. */
async function askOnA(sessionId: string, question: string) {
  const response = await fetch(`${a.url}/mcp`, {
    method: 'POST',
    headers: headersFor(sessionId),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: `call-${question}`,
      method: 'tools/call',
      params: { name: 'confirm', arguments: { question } },
    }),
  });
  const reader = response.body!.getReader();
  let seen = '';
  for (;;) {
    const match = /"id":"(moat-input-[0-9a-f-]+)"/.exec(seen);
    if (match) return { askId: match[1] as string, reader };
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before the question: ${seen}`);
    seen += Buffer.from(value).toString('utf8');
  }
}

async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return rest;
    rest += Buffer.from(value).toString('utf8');
  }
}

const answer = (sessionId: string, replica: ProxyProcess, id: string, text: string) =>
  fetch(`${replica.url}/mcp`, {
    method: 'POST',
    headers: headersFor(sessionId),
    body: JSON.stringify({ jsonrpc: '2.0', id, result: { action: 'accept', content: { answer: text } } }),
  });

describe('the reverse direction across two proxy replicas sharing Redis, without sticky sessions', () => {
  it('finishes a round on A whose answer landed on B', async () => {
    const { client, answersOnB } = await connectSplit();
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: 'accept',
      content: { answer: 'yes' },
    }));
    const result = await client.callTool({ name: 'confirm', arguments: { question: 'Ship?' } });
    expect(result.content).toEqual([{ type: 'text', text: 'asked:Ship?:yes' }]);
    expect(answersOnB()).toBe(1);
    await client.close();
  });

  it("refuses another session's answer to a question, which still waits for its own", async () => {
    const { client: owner, sessionId } = await connectSplit();
    const { client: other, sessionId: otherSession } = await connectSplit();
    const { askId, reader } = await askOnA(sessionId, 'Mine?');

    const foreign = await answer(otherSession, b, askId, 'theirs');
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ id: askId, error: { code: -32600 } });

    const own = await answer(sessionId, b, askId, 'ours');
    expect(own.status).toBe(202);
    expect(await readRest(reader)).toContain('asked:Mine?:ours');
    await Promise.all([owner.close(), other.close()]);
  });

  it("serves the session's GET stream on another replica, with the subscriptions stored in the session", async () => {
    const { client, sessionId } = await connectSplit();
    // Subscribed through A (stored in Redis); B has seen nothing of this session yet.
    await client.subscribeResource({ uri: WATCHED });
    const stream = await fetch(`${b.url}/mcp`, {
      headers: { ...headersFor(sessionId), accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let seen = '';
    // B's listen at the backend opens asynchronously: notify until the update arrives (bounded).
    // One read at a time: a read left behind by the timeout would swallow the chunk it gets.
    let reading = reader.read();
    for (let i = 0; i < 50 && !seen.includes('notifications/resources/updated'); i++) {
      backend.resourceUpdated(WATCHED);
      const chunk = await Promise.race([
        reading,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100)),
      ]);
      if (chunk === undefined) continue;
      if (chunk.value) seen += Buffer.from(chunk.value).toString('utf8');
      if (chunk.done) break;
      reading = reader.read();
    }
    expect(seen).toContain(`"uri":"${WATCHED}"`);
    await reader.cancel();
    await client.close();
  });

  it('refuses, without waiting, an answer whose asking replica is gone', async () => {
    const { sessionId } = await connectSplit();
    const { askId } = await askOnA(sessionId, 'Gone?');
    await stopProxyProcess(a);

    const late = await answer(sessionId, b, askId, 'too late');
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({
      id: askId,
      error: { code: -32600, message: expect.stringMatching(/No request waits for this answer/) as unknown },
    });
    // An id the proxy never gave out is refused the same way.
    const made = await answer(sessionId, b, 'not-ours', 'x');
    expect(made.status).toBe(400);
  });
});
