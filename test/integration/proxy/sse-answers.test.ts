/**
 * SSE answers to a POST through the real proxy: a short answer whose event and end arrive in one
 * packet (as the MCP SDK's server sends them) reaches the client whole and correct;
 * events spaced in time reach the client one by one before the stream ends; a client that stops
 * reading holds the backend back; an idle answer stream gets keep-alives; a backend breaking the
 * stream, or taking longer than the upstream timeout, still ends the client's response cleanly.
 * The backend is a server written here (a fake: no real MCP server paces its packets on demand).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { MCP_HEADERS, memoryLogger, sseMessages, testConfig } from '../../support/proxy-harness.js';
import { readUntil } from '../../support/streams.js';

const BIG_EVENTS = 8000;
const BIG_EVENT = `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat(4000)}"}}\n\n`;

const result = (id: number, text: string) =>
  `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } })}\n\n`;

/** What the fake backend does, and lets the test see or steer. */
interface Backend {
  url: string;
  /** Resolved by the test to let the "spaced" answer send its second event. */
  release: () => void;
  /** How many big events the backend had written when its socket stopped taking them. */
  bigWritten: () => number;
  bigStalled: Promise<void>;
  close(): Promise<void>;
}

async function startBackend(): Promise<Backend> {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let bigWritten = 0;
  let stalled: () => void = () => {};
  const bigStalled = new Promise<void>((resolve) => (stalled = resolve));

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { id, params } = JSON.parse(Buffer.concat(chunks).toString()) as {
      id: number;
      params: { name: string };
    };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders(); // the head in a packet of its own
    await new Promise((resolve) => setTimeout(resolve, 10));
    switch (params.name) {
      case 'short':
        res.end(result(id, 'short')); // the event and the end in one packet
        return;
      case 'spaced':
        res.write(result(0, 'first'));
        await released;
        res.end(result(id, 'second'));
        return;
      case 'big':
        for (let i = 0; i < BIG_EVENTS; i++) {
          bigWritten = i + 1;
          if (!res.write(BIG_EVENT)) {
            stalled();
            await once(res, 'drain');
          }
        }
        res.end(result(id, 'big'));
        return;
      case 'idle':
        await new Promise((resolve) => setTimeout(resolve, 600));
        res.end(result(id, 'idle'));
        return;
      case 'broken':
        res.write(result(0, 'before the break'), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      case 'hang':
        res.write(result(0, 'before the hang')); // then nothing, until the upstream timeout
        return;
      case 'hang-mid-event':
        res.write(result(0, 'before the hang') + 'data: {"jsonrpc":"2.0","method":"notifi');
        return;
    }
  };
  const server: Server = createServer((req, res) => void answer(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    release,
    bigWritten: () => bigWritten,
    bigStalled,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const call = (name: string, id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

function callTool(proxy: RunningProxy, name: string, id: number): Promise<Response> {
  return fetch(`${proxy.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: call(name, id) });
}

/** The value once it has not changed for half a second (polled; bounded by the test's timeout). */
async function settled(value: () => number): Promise<number> {
  let last = value();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (value() === last) return last;
    last = value();
  }
}

describe.each([
  ['without policies', {}],
  ['with policies', { tools_filter: ['short', 'spaced', 'big', 'idle', 'broken', 'hang', 'hang-mid-event'] }],
])('SSE answers to a POST, %s', (_name, overrides: Partial<RunConfigInput>) => {
  let backend: Backend;
  let proxy: RunningProxy;
  /** The same backend behind an upstream timeout of one second. */
  let quick: RunningProxy;
  beforeAll(async () => {
    backend = await startBackend();
    const start = (upstream_timeout: string) =>
      startProxy(
        testConfig({ upstream_timeout, ...overrides }),
        { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
        { logger: memoryLogger().logger, keepAliveMs: 200 },
      );
    [proxy, quick] = await Promise.all([start('30s'), start('1s')]);
  });
  afterAll(async () => {
    await Promise.all([proxy.close(), quick.close()]);
    await backend.close();
  });

  it('relays a short answer whose event and end arrive in one packet, whole and correct', async () => {
    const { port } = new URL(proxy.url);
    const socket = connect(Number(port), '127.0.0.1');
    const body = call('short', 7);
    socket.write(
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        `accept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    let text = '';
    while (!text.endsWith('\r\n0\r\n\r\n')) {
      const [data] = (await once(socket, 'data')) as [Buffer];
      text += data.toString();
    }
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain('content-type: text/event-stream');
    const event = result(7, 'short');
    // The one event as the backend sent it, in one chunk, then the end of the body.
    expect(text.slice(text.indexOf('\r\n\r\n') + 4)).toBe(
      `${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n0\r\n\r\n`,
    );
  });

  it('passes events spaced in time one by one, before the stream ends', async () => {
    const res = await callTool(proxy, 'spaced', 8);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    // The backend sends its second event only once the client has the first one.
    const first = await readUntil(reader, (text) => text.includes('first'));
    expect(first.done).toBe(false);
    expect(sseMessages(first.text)).toHaveLength(1);
    backend.release();
    const rest = await readUntil(reader, () => false, first.text);
    expect(rest.done).toBe(true);
    expect(sseMessages(rest.text)).toMatchObject([
      { id: 0, result: { content: [{ text: 'first' }] } },
      { id: 8, result: { content: [{ text: 'second' }] } },
    ]);
  });

  it('holds the backend back while the client does not read, and loses nothing', async () => {
    const res = await callTool(proxy, 'big', 9);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await backend.bigStalled;
    // The client reads nothing: once the buffers on the way are full the backend must stay
    // stalled, short of its end (a proxy reading on regardless would let it write everything).
    const stalledAt = await settled(backend.bigWritten);
    expect(stalledAt).toBeLessThan(BIG_EVENTS);
    const all = await readUntil(reader, () => false);
    expect(all.done).toBe(true);
    const messages = sseMessages(all.text);
    expect(messages).toHaveLength(BIG_EVENTS + 1);
    expect(messages.at(-1)).toMatchObject({ id: 9, result: { content: [{ text: 'big' }] } });
  });

  it('sends keep-alives on an answer stream that stays idle', async () => {
    const res = await callTool(proxy, 'idle', 10);
    const text = await res.text();
    expect(text.startsWith(': keep-alive\n\n')).toBe(true);
    expect(sseMessages(text)).toMatchObject([{ id: 10, result: { content: [{ text: 'idle' }] } }]);
  });

  it('ends the client response cleanly when the backend breaks the stream', async () => {
    const res = await callTool(proxy, 'broken', 11);
    expect(res.status).toBe(200);
    const text = await res.text(); // ends: no hang, no error
    expect(sseMessages(text)).toMatchObject([{ id: 0, result: { content: [{ text: 'before the break' }] } }]);
  });

  it('ends a stream past the upstream timeout with a JSON-RPC error for the request', async () => {
    const res = await callTool(quick, 'hang', 12);
    const text = await res.text();
    expect(sseMessages(text)).toMatchObject([
      { id: 0, result: { content: [{ text: 'before the hang' }] } },
      { id: 12, error: { code: -32000, message: expect.stringMatching(/upstream timeout/i) } },
    ]);
  });

  it('sends the timeout error as an event of its own when the backend stops half-way in one', async () => {
    const res = await callTool(quick, 'hang-mid-event', 13);
    const events = (await res.text()).split('\n\n').filter((event) => event !== '');
    // Without policies the cut event reaches the client as it came (with policies it is held back).
    expect(events.at(0)).toBe(result(0, 'before the hang').slice(0, -2));
    expect(sseMessages(`${events.at(-1)}\n\n`)).toMatchObject([
      { id: 13, error: { code: -32000, message: expect.stringMatching(/upstream timeout/i) } },
    ]);
  });
});
