import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { withData, type SseEvent } from '../../mcp/sse.js';
import { SseWriter } from '../pipeline/sse.js';
import { relaySse } from './relay.js';
import type { BodyFlow, BodySink } from './undici-pool.js';

let server: Server | undefined;
afterEach(async () => {
  server?.close();
  if (server) await once(server, 'close');
  server = undefined;
});

/**
 * A fake upstream body that delivers `chunks` with these exact boundaries, one per macrotask,
 * honouring pause (TCP would not keep the boundaries the test is about).
 */
function chunkSource(chunks: Buffer[]): { consume(sink: BodySink): void } {
  return {
    consume(sink) {
      let next = 0;
      let paused = false;
      let scheduled = false;
      const schedule = (): void => {
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          if (paused) return;
          if (next === chunks.length) return sink.end();
          sink.data(chunks[next++] as Buffer, flow);
          schedule();
        });
      };
      const flow: BodyFlow = {
        pause: () => (paused = true),
        resume: () => {
          paused = false;
          schedule();
        },
        abort: (reason) => sink.error(reason),
      };
      schedule();
    },
  };
}

/** A fake upstream body whose one chunk and end arrive together, as undici delivers them. */
function oneTickSource(chunk: Buffer): Body {
  const flow: BodyFlow = { pause: () => {}, resume: () => {}, abort: () => {} };
  return {
    consume: (sink) =>
      void setImmediate(() => {
        sink.data(chunk, flow);
        sink.end();
      }),
  };
}

type Body = { consume(sink: BodySink): void };

/**
 * Relays `source` to a real HTTP client; returns what it read, the events the rewrite saw and
 * how many writes the server's socket made for the answer (head and body).
 */
async function relayed(
  source: Body,
  policies = true,
): Promise<{ body: string; rewritten: string[]; socketWrites: number }> {
  const rewritten: string[] = [];
  const rewrite = (event: SseEvent): string => {
    rewritten.push(event.raw);
    return event.data?.includes('NEED') ? withData(event, event.data.toLowerCase()) : event.raw;
  };
  let socketWrites = 0;
  server = createServer((_req, res) => {
    // Count the socket's writes to the kernel (each _write or _writev is one syscall).
    type Writes = Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
    const socket = res.socket as unknown as Writes;
    for (const method of ['_write', '_writev'] as const) {
      const original = socket[method].bind(socket);
      socket[method] = (...args) => {
        socketWrites++;
        return original(...args);
      };
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const writer = new SseWriter(res, { keepAliveMs: 0 });
    const screen = (chunk: Buffer) => !chunk.includes('NEED');
    // The relay ends the response itself when the body ends.
    void relaySse(source, writer, policies ? rewrite : undefined, screen);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const res = await new Promise<IncomingMessage>((resolve, reject) =>
    request({ host: '127.0.0.1', port }, resolve).on('error', reject).end(),
  );
  const parts: Buffer[] = [];
  for await (const part of res) parts.push(part as Buffer);
  return { body: Buffer.concat(parts).toString('utf8'), rewritten, socketWrites };
}

describe('relaySse', () => {
  it('passes chunks of whole events no rewrite needs as they came, and splits the rest', async () => {
    const e = Buffer.from('é');
    const { body, rewritten } = await relayed(
      chunkSource([
        Buffer.from('data: a\n\ndata: b\n\n'), // whole and not needed: passed as is
        Buffer.from('data: NEED\n\ndata: c\n\n'), // needed: every event through the rewrite
        Buffer.from('data: d\n'), // a partial event ...
        Buffer.from('\ndata: e\n\n'), // ... so this chunk goes through the parser
        Buffer.concat([Buffer.from('data: f\n\ndata: '), e.subarray(0, 1)]), // ends inside a character
        Buffer.concat([e.subarray(1), Buffer.from('\n\n')]), // not at a boundary: parsed
        Buffer.from('data: g\n\n'), // whole again: passed as is
      ]),
    );
    expect(body).toBe(
      'data: a\n\ndata: b\n\ndata: need\n\ndata: c\n\ndata: d\n\ndata: e\n\ndata: f\n\ndata: é\n\ndata: g\n\n',
    );
    expect(rewritten).toEqual([
      'data: NEED\n\n',
      'data: c\n\n',
      'data: d\n\n',
      'data: e\n\n',
      'data: f\n\n',
      'data: é\n\n',
    ]);
  });

  it.each([
    ['raw', false],
    ['through the rewrite', true],
  ])(
    'ends the answer %s in the tick its last event arrives with the end: one socket write',
    async (_name, policies) => {
      const event = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
      const { body, socketWrites } = await relayed(oneTickSource(Buffer.from(event)), policies);
      expect(body).toBe(event);
      expect(socketWrites).toBe(1); // head, event and the chunked terminator together
    },
  );
});
