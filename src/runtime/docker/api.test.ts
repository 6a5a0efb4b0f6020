/**
 * The engine client's own rules: query encoding, path segments, the probe timeout and the
 * attach fallback for an engine that answers 200 instead of upgrading (Podman always upgrades,
 * so these two edges are shown with a raw socket server here; test/integration/runtime/
 * engine-api.test.ts covers the rest against Podman).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineApi, encodeQuery, segment } from './api.js';

describe('encodeQuery', () => {
  it('sends objects as JSON, arrays as repeated keys, and leaves undefined out', () => {
    const query = encodeQuery({
      all: true,
      t: 5,
      filters: { label: ['moat=true', 'moat-name=a b'] },
      changes: ['USER 1:1', 'ENTRYPOINT ["/x"]'],
      tail: undefined,
    });
    const params = new URLSearchParams(query.slice(1));
    expect(query.startsWith('?')).toBe(true);
    expect(params.get('all')).toBe('true');
    expect(params.get('t')).toBe('5');
    expect(JSON.parse(params.get('filters')!)).toEqual({ label: ['moat=true', 'moat-name=a b'] });
    expect(params.getAll('changes')).toEqual(['USER 1:1', 'ENTRYPOINT ["/x"]']);
    expect(params.has('tail')).toBe(false);
  });

  it('is empty without parameters', () => {
    expect(encodeQuery({})).toBe('');
    expect(encodeQuery({ tail: undefined })).toBe('');
  });
});

describe('segment', () => {
  it('keeps the slashes of an image reference and escapes what would end the path', () => {
    expect(segment('localhost:5000/team/app:1.0')).toBe('localhost%3A5000/team/app%3A1.0');
    expect(segment('a?b#c d')).toBe('a%3Fb%23c%20d');
  });
});

describe('against a raw socket server', () => {
  let dir: string | undefined;
  let server: Server | undefined;
  const sockets: Socket[] = [];

  afterEach(async () => {
    for (const s of sockets) s.destroy();
    sockets.length = 0;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** A unix socket server; `onRequest` gets each connection, its request head, and what came after it. */
  async function listen(onRequest: (socket: Socket, head: string, rest: string) => void): Promise<EngineApi> {
    dir = mkdtempSync(join(tmpdir(), 'moat-api-'));
    const socketPath = join(dir, 'engine.sock');
    server = createServer((socket) => {
      sockets.push(socket);
      let seen = '';
      const onData = (chunk: Buffer): void => {
        seen += chunk.toString('latin1');
        const end = seen.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        onRequest(socket, seen.slice(0, end), seen.slice(end + 4));
      };
      socket.on('data', onData);
    });
    await new Promise<void>((resolve) => server!.listen(socketPath, resolve));
    return new EngineApi({ socketPath });
  }

  it('gives up on an engine that never answers, saying so', async () => {
    const api = await listen(() => undefined);
    const started = Date.now();
    await expect(api.json('GET', '/_ping', { timeoutMs: 300 })).rejects.toThrow(
      'the engine did not answer within 0.3 s',
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('attaches to an engine that answers 200 instead of upgrading, with an empty request body', async () => {
    const heads: string[] = [];
    const api = await listen((socket, head) => {
      heads.push(head);
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n');
      // Echo the raw input back, as an attached `cat` would.
      socket.pipe(socket);
    });
    const stream = await api.hijack('/containers/c1/attach', { stream: true, stdin: true });
    const echoed = new Promise<string>((resolve) =>
      stream.once('data', (chunk: Buffer) => resolve(String(chunk))),
    );
    stream.write('ping\n');
    expect(await echoed).toBe('ping\n');
    expect(heads[0]).toMatch(/^POST \/containers\/c1\/attach\?stream=true&stdin=true HTTP\/1\.1\r\n/);
    expect(heads[0]).toMatch(/\r\nupgrade: tcp(\r\n|$)/i);
    expect(heads[0]).toMatch(/\r\ncontent-length: 0(\r\n|$)/i);
    stream.destroy();
  });

  it('starts an exec with its JSON body whole, then carries the raw stream (an upgraded connection)', async () => {
    const seen: Array<{ head: string; body: string }> = [];
    const api = await listen((socket, head, rest) => {
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      let body = rest;
      const answer = (): void => {
        seen.push({ head, body: body.slice(0, length) });
        socket.write('HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
        socket.pipe(socket);
      };
      if (body.length >= length) return answer();
      const more = (chunk: Buffer): void => {
        body += chunk.toString('latin1');
        if (body.length < length) return;
        socket.off('data', more);
        answer();
      };
      socket.on('data', more);
    });
    const stream = await api.hijack('/exec/e1/start', {}, { Detach: false, Tty: false });
    const echoed = new Promise<string>((resolve) =>
      stream.once('data', (chunk: Buffer) => resolve(String(chunk))),
    );
    stream.write('ping\n');
    expect(await echoed).toBe('ping\n');
    expect(seen[0]?.head).toMatch(/^POST \/exec\/e1\/start HTTP\/1\.1\r\n/);
    expect(seen[0]?.head).toMatch(/\r\ncontent-type: application\/json(\r\n|$)/i);
    expect(JSON.parse(seen[0]!.body)).toEqual({ Detach: false, Tty: false });
    stream.destroy();
  });
});
