import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createPool, exchange, type BodyFlow, type BodySink, type UpstreamPool } from './undici-pool.js';

const HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';
const EVENT = 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
/** One chunk of the chunked encoding. */
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const TERMINATOR = '0\r\n\r\n';

let server: Server | undefined;
let pool: UpstreamPool | undefined;
afterEach(async () => {
  await pool?.destroy();
  server?.close();
  pool = undefined;
  server = undefined;
});

/**
 * A raw HTTP server (so the test decides what goes in which TCP packet); `answer` gets the
 * socket once a request has arrived.
 */
async function upstream(answer: (socket: Socket) => void): Promise<string> {
  server = createServer((socket) => socket.once('data', () => answer(socket)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pool = createPool(origin);
  return origin;
}

function send(signal = new AbortController().signal) {
  return exchange(pool as UpstreamPool, { path: '/mcp', method: 'POST', headers: {}, signal });
}

/** Records what a sink receives, and whether anything ran between its calls (a later tick). */
function recorder() {
  const seen: string[] = [];
  let flow: BodyFlow | undefined;
  let settle: () => void = () => {};
  const done = new Promise<void>((resolve) => (settle = resolve));
  let gotData: () => void = () => {};
  const data = new Promise<void>((resolve) => (gotData = resolve));
  const sink: BodySink = {
    data(chunk, f) {
      flow = f;
      seen.push(chunk.toString());
      gotData();
      queueMicrotask(() => seen.push('later'));
    },
    end() {
      seen.push('end');
      settle();
    },
    error(err) {
      seen.push(`error: ${err.message}`);
      settle();
    },
  };
  return { sink, seen, data, done, flow: () => flow };
}

describe('exchange: a streamed body consumed by a sink', () => {
  it('delivers the last chunk and the end in the same tick when they arrive together', async () => {
    await upstream((socket) => {
      socket.write(HEAD);
      // The event and the end in a second packet, as the MCP SDK's server sends them.
      setTimeout(() => socket.write(chunk(EVENT) + TERMINATOR), 20);
    });
    const answer = await send();
    const r = recorder();
    answer.consume(r.sink);
    await r.done;
    expect(r.seen.slice(0, 2)).toEqual([EVENT, 'end']);
  });

  it('holds a body that arrives before the consumer, then delivers it and its end at once', async () => {
    await upstream((socket) => socket.write(HEAD + chunk(EVENT) + TERMINATOR));
    const answer = await send();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the body arrives meanwhile
    const r = recorder();
    answer.consume(r.sink);
    await r.done;
    expect(r.seen.slice(0, 2)).toEqual([EVENT, 'end']);
  });

  it('delivers nothing while paused, then the rest and the end on resume', async () => {
    // All in one packet: undici would parse it in one go if the sink did not pause it.
    await upstream((socket) => socket.write(HEAD + chunk('data: 1\n\n') + chunk('data: 2\n\n') + TERMINATOR));
    const answer = await send();
    const seen: string[] = [];
    let flow: BodyFlow | undefined;
    let next: () => void = () => {};
    const called = () => new Promise<void>((resolve) => (next = resolve));
    let first = called();
    answer.consume({
      data: (data, f) => {
        seen.push(data.toString());
        flow = f;
        f.pause();
        next();
      },
      end: () => {
        seen.push('end');
        next();
      },
      error: (err) => seen.push(err.message),
    });
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['data: 1\n\n']);
    first = called();
    flow?.resume();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['data: 1\n\n', 'data: 2\n\n']); // paused again: no end yet
    first = called();
    flow?.resume();
    await first;
    expect(seen).toEqual(['data: 1\n\n', 'data: 2\n\n', 'end']);
  });

  it('reports a body broken mid-way as an error after the chunks that came', async () => {
    await upstream((socket) => {
      socket.write(HEAD + chunk('data: 1\n\n'));
      setTimeout(() => socket.destroy(), 20);
    });
    const answer = await send();
    const r = recorder();
    answer.consume(r.sink);
    await r.done;
    expect(r.seen[0]).toBe('data: 1\n\n');
    expect(r.seen.at(-1)).toMatch(/^error: /);
  });

  it('aborts the exchange when the caller aborts, and when the sink does', async () => {
    const closed: Promise<unknown>[] = [];
    await upstream((socket) => {
      closed.push(once(socket, 'close'));
      socket.write(HEAD + chunk('data: 1\n\n'));
    });
    const controller = new AbortController();
    const first = recorder();
    (await send(controller.signal)).consume(first.sink);
    await first.data;
    controller.abort(new Error('client gone'));
    await first.done;
    expect(first.seen).toEqual(['data: 1\n\n', 'later', 'error: client gone']);

    const second = recorder();
    (await send()).consume(second.sink);
    await second.data;
    second.flow()?.abort(new Error('stop'));
    await second.done;
    expect(second.seen.at(-1)).toBe('error: stop');
    await Promise.all(closed); // both upstream connections were closed
  });

  it('still gives a stream to callers that ask for one, and refuses a second reader', async () => {
    await upstream((socket) => socket.write(HEAD + chunk(EVENT) + TERMINATOR));
    const answer = await send();
    const parts: Buffer[] = [];
    for await (const part of answer.body) parts.push(part as Buffer);
    expect(Buffer.concat(parts).toString()).toBe(EVENT);
    expect(() => answer.consume(recorder().sink)).toThrow(/already being read/);
  });
});
