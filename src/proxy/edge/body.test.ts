/**
 * readBody over a real node:http server and raw client sockets: a body that has wholly arrived
 * before it is asked for (taken from the stream's buffer) and one still arriving (read as it
 * streams) give the same bytes, and both keep the size limit.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProxyRejection } from '../pipeline/errors.js';
import { readBody } from './body.js';

const LIMIT = 64;
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

/** A server that hands each request to `read` after `delayMs`, and answers with what it read. */
async function serverReading(
  delayMs: number,
): Promise<{ port: number; complete: boolean[]; outcomes: string[] }> {
  const complete: boolean[] = [];
  const outcomes: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    void (async () => {
      await sleep(delayMs);
      complete.push(req.complete);
      let outcome: string;
      try {
        outcome = `read:${(await readBody(req, LIMIT, 5000)).toString('hex')}`;
      } catch (err) {
        outcome = `refused:${err instanceof ProxyRejection ? err.httpStatus : String(err)}`;
      }
      outcomes.push(outcome);
      res.end(outcome);
    })();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, complete, outcomes };
}

/** Sends `parts` of a raw HTTP request, `gapMs` apart, and returns the answer's body. */
async function send(port: number, parts: Array<string | Buffer>, gapMs = 0): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
  const ended = new Promise((resolve) => socket.once('end', resolve));
  for (const part of parts) {
    socket.write(part);
    if (gapMs) await sleep(gapMs);
  }
  await ended;
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}

const head = (length: number) =>
  `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
const chunkedHead =
  'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n';
const hex = (text: string | Buffer) => Buffer.from(text).toString('hex');

describe('readBody', () => {
  it('takes a body that has wholly arrived from the buffer, BOM removed', async () => {
    const server = await serverReading(50);
    const json = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
    expect(await send(server.port, [Buffer.concat([Buffer.from(head(withBom.length)), withBom])])).toBe(
      `read:${hex(json)}`,
    );
    const chunked = `${chunkedHead}5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n`;
    expect(await send(server.port, [chunked])).toBe(`read:${hex('{"a":1}')}`);
    expect(await send(server.port, [head(0)])).toBe('read:');
    // The bodies had arrived before they were read: the buffered path was taken.
    expect(server.complete).toEqual([true, true, true]);
  });

  it('reads a body still arriving as it streams, with the same bytes', async () => {
    const server = await serverReading(0);
    const answer = await send(server.port, [chunkedHead, '5\r\n{"a":\r\n', '2\r\n1}\r\n', '0\r\n\r\n'], 30);
    expect(answer).toBe(`read:${hex('{"a":1}')}`);
    // A Content-Length body sent after its head (as fetch sends one), in two parts.
    const json = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    expect(await send(server.port, [head(json.length), json.slice(0, 10), json.slice(10)], 30)).toBe(
      `read:${hex(json)}`,
    );
    expect(server.complete).toEqual([false, false]);
  });

  it('fails a read whose client goes away before the end of its body', async () => {
    const server = await serverReading(0);
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`${head(40)}{"jsonrpc"`);
    await sleep(30);
    socket.destroy();
    await vi.waitFor(() => expect(server.outcomes).toHaveLength(1), { timeout: 3000 });
    expect(server.outcomes[0]).toMatch(/^refused:Error: client closed the connection/);
  });

  it('refuses a body over the limit with 413, arrived or arriving', async () => {
    const big = 'x'.repeat(LIMIT + 1);
    const arrived = await serverReading(50);
    expect(
      await send(arrived.port, [`${chunkedHead}${(LIMIT + 1).toString(16)}\r\n${big}\r\n0\r\n\r\n`]),
    ).toBe('refused:413');
    expect(arrived.complete).toEqual([true]);
    const arriving = await serverReading(0);
    expect(
      await send(arriving.port, [chunkedHead, `${(LIMIT + 1).toString(16)}\r\n${big}\r\n`, '0\r\n\r\n'], 30),
    ).toBe('refused:413');
  });
});
