/**
 * Session lifecycle through the HTTP forwarder: sliding expiry (404 once idle for a whole TTL),
 * resumption with Last-Event-ID passed to the backend under its own session id, and a session
 * store outage answered with 503 instead of a false "Session not found".
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { MemorySessionStore } from '../../../src/proxy/sessions/memory.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, sseMessages, testConfig } from '../../support/proxy-harness.js';
import { startRedis } from '../../support/redis.js';
import { readUntil } from '../../support/streams.js';

let backend: HttpBackendServer;
beforeAll(async () => {
  backend = await startV1StreamableBackend();
});
afterAll(() => backend.close());

const VERSION = { 'mcp-protocol-version': '2025-11-25' };

async function initialize(proxy: RunningProxy): Promise<Record<string, string>> {
  const init = await post(`${proxy.url}/mcp`, INIT_BODY);
  expect(init.status).toBe(200);
  const headers = { 'mcp-session-id': init.headers.get('mcp-session-id') as string, ...VERSION };
  expect(
    (await post(`${proxy.url}/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status,
  ).toBe(202);
  return headers;
}

/** A `progress` tools/call answered on an SSE stream with event ids; returns its text and the ids. */
async function progressCall(
  proxy: RunningProxy,
  headers: Record<string, string>,
  id: number,
  tag: string,
): Promise<{ text: string; ids: string[] }> {
  const call = await post(
    `${proxy.url}/mcp`,
    {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'progress', arguments: { tag }, _meta: { progressToken: `p-${tag}` } },
    },
    headers,
  );
  const ids = [...call.text.matchAll(/^id: (.+)$/gm)].map((m) => m[1] as string);
  expect(ids.length).toBeGreaterThanOrEqual(3);
  return { text: call.text, ids };
}

/**
 * Resumes after `lastEventId` as if the connection had broken there. The SDK server answers 409
 * until it has let go of the finished stream, so ask again briefly.
 */
async function resumeAfter(
  proxy: RunningProxy,
  headers: Record<string, string>,
  lastEventId: string,
): Promise<Response> {
  const resume = () =>
    fetch(`${proxy.url}/mcp`, {
      headers: { accept: 'text/event-stream', 'last-event-id': lastEventId, ...headers },
    });
  let res = await resume();
  for (let i = 0; res.status === 409 && i < 20; i++) {
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 100));
    res = await resume();
  }
  expect(res.status).toBe(200);
  return res;
}

describe('sliding session TTL', () => {
  it('keeps a session used within the TTL and forgets one idle for a whole TTL', async () => {
    let now = Date.now();
    const sessions = new MemorySessionStore({ ttlMs: 60_000, now: () => now });
    const proxy = await startProxy(
      testConfig(),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger, sessions },
    );
    try {
      const headers = await initialize(proxy);
      const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
      now += 45_000;
      expect((await post(`${proxy.url}/mcp`, list, headers)).status).toBe(200);
      now += 45_000;
      expect((await post(`${proxy.url}/mcp`, list, headers)).status).toBe(200);
      now += 61_000;
      const expired = await post(`${proxy.url}/mcp`, list, headers);
      expect(expired.status).toBe(404);
      expect(expired.json).toMatchObject({ error: { code: -32001, message: 'Session not found' } });
    } finally {
      await proxy.close();
      await sessions.close();
    }
  });
});

describe('resumption', () => {
  it('passes Last-Event-ID to the backend, which replays the rest of the stream', async () => {
    const proxy = await startProxy(
      testConfig(),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
    try {
      const headers = await initialize(proxy);
      const call = await progressCall(proxy, headers, 5, 'r');
      const { ids } = call;
      const res = await resumeAfter(proxy, headers, ids[0] as string);
      // What followed the first event on the original stream (the backend's replay order may differ).
      const events = call.text.split(/\n\n/);
      const first = events.findIndex((e) => e.includes(`id: ${ids[0]}`));
      const expected = sseMessages(events.slice(first + 1).join('\n\n'));
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      // Until every replayed event is complete (events can span chunks and come in any order).
      const complete = (text: string) => sseMessages(text.slice(0, text.lastIndexOf('\n\n') + 2));
      const { text } = await readUntil(reader, (read) => complete(read).length >= expected.length);
      await reader.cancel();
      const replayed = complete(text);
      expect(replayed).toContainEqual(
        expect.objectContaining({
          id: 5,
          result: expect.objectContaining({ content: [{ type: 'text', text: 'done:r' }] }),
        }),
      );
      expect(replayed).toHaveLength(expected.length);
      expect(replayed).toEqual(expect.arrayContaining(expected));
      const resumeRequest = backend.seen.find((r) => r.headers['last-event-id'] === ids[0]);
      expect(resumeRequest?.headers['mcp-session-id']).toBe(backend.sessionIds.at(-1));
    } finally {
      await proxy.close();
    }
  });
});

describe('resumption with a response policy', () => {
  it("gives the replayed answer to the response policies with its request, after the POST's stream ended", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'moat-resume-audit-'));
    const logFile = join(dir, 'audit.jsonl');
    // Audit with response data: the response tap sees every answer and records it for the line.
    const proxy = await startProxy(
      testConfig({ audit_config: { logFile, includeResponseData: true } }),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
    try {
      const headers = await initialize(proxy);
      const { ids } = await progressCall(proxy, headers, 6, 'q');
      const res = await resumeAfter(proxy, headers, ids[0] as string);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await readUntil(reader, (text) => text.includes('done:q'));
      await reader.cancel();
      await proxy.close();
      const lines = readFileSync(logFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; data?: { response?: string } });
      // The resumed stream's line carries the replayed answer: the tap knew which request it answers.
      const stream = lines.find((line) => line.type === 'sse_connection');
      expect(stream?.data?.response).toContain('done:q');
    } finally {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('session store outage', () => {
  it('answers 503 while Redis is down, not "Session not found"', async () => {
    const redis = await startRedis();
    const proxy = await startProxy(
      testConfig({ scaling_config: { session_redis: { address: redis.address } } }),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
    try {
      const headers = await initialize(proxy);
      await redis.stop();
      const res = await post(`${proxy.url}/mcp`, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ error: { code: -32000, message: 'Session store unavailable' } });
    } finally {
      await proxy.close();
      await redis.stop();
    }
  });
});
