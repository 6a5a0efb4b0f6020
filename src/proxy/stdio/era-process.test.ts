/**
 * The second process of a dual-era stdio server, driven through in-memory pipes: each "process"
 * is a scripted server the test starts (`start()`), answering `server/discover` as a dual-era
 * server does or as a 2025-only one does (the real processes and containers are exercised in
 * test/integration/conformance/ and test/integration/workloads/stdio-dual-era.test.ts).
 */
import { PassThrough, Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EraProcess, STDERR_LINE_BYTES } from './era-process.js';
import { LineSplitter } from './framing.js';
import { MuxSession } from './session.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../mcp/jsonrpc.js';
import type { StdioPipes } from '../../mcp/stdio.js';
import { localContext as ctx } from '../../../test/support/message-context.js';

const ENVELOPE = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };

/** A scripted server process: what it read, its stderr, and whether its attachment was closed. */
interface Scripted {
  pipes: StdioPipes;
  read: Array<JsonRpcMessage & { id?: number; method?: string }>;
  stderr: PassThrough;
  stdout: PassThrough;
  closed: boolean;
}

function scripted(speaks2026: boolean): Scripted {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const server: Scripted = {
    stderr,
    stdout,
    read: [],
    closed: false,
    pipes: {
      stdin,
      stdout,
      stderr,
      close: () => {
        server.closed = true;
        stdout.end();
      },
    },
  };
  // Answers come in a later turn, as from a real process.
  const answer = (message: JsonRpcResponse) =>
    setImmediate(() => stdout.write(`${JSON.stringify(message)}\n`));
  const splitter = new LineSplitter((line) => {
    const message = JSON.parse(line) as Scripted['read'][number];
    server.read.push(message);
    if (message.method === 'server/discover' && message.id !== undefined) {
      answer(
        speaks2026
          ? {
              jsonrpc: '2.0',
              id: message.id,
              result: { supportedVersions: ['2026-07-28'], capabilities: {} },
            }
          : { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } },
      );
    } else if (
      message.method === 'tools/call' &&
      message.id !== undefined &&
      !JSON.stringify(message).includes('"hang"')
    ) {
      answer({ jsonrpc: '2.0', id: message.id, result: { content: [], resultType: 'complete' } });
    }
  });
  stdin.on('data', (chunk: Buffer) => splitter.push(chunk));
  return server;
}

/** Log lines, parsed. */
function logSink() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, logger: pino({ level: 'debug' }, stream) };
}

const processes: EraProcess[] = [];
afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.close()));
});

function eraProcess(
  start: () => Promise<StdioPipes>,
  extra: { retryAfterMs?: number; maxAttempts?: number } = {},
) {
  const { lines, logger } = logSink();
  const era = new EraProcess({
    start,
    policies: [],
    requestTimeoutMs: 5_000,
    logger,
    reattach: { initialBackoffMs: 1, maxBackoffMs: 5, maxAttempts: extra.maxAttempts ?? 3 },
    ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs }),
  });
  processes.push(era);
  return { era, lines };
}

/** One 2026-07-28 tools/call through the process's multiplexer (`tool` 'hang': never answered); resolves with its answer. */
function call(
  mux: NonNullable<Awaited<ReturnType<EraProcess['multiplexer']>>>,
  tool = 't',
): Promise<JsonRpcResponse> {
  const session = new MuxSession('', 'streamable-http', true);
  mux.addSession(session);
  return new Promise((resolve) =>
    mux.forwardRequest(
      session,
      { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: tool, ...ENVELOPE } },
      { related: () => true, respond: (response) => resolve(response) },
      ctx,
    ),
  );
}

/** A `start` that starts a new scripted server each call, and the servers it started. */
function processesOf(speaks2026: boolean) {
  const servers: Scripted[] = [];
  const start = vi.fn(() => {
    const server = scripted(speaks2026);
    servers.push(server);
    return Promise.resolve(server.pipes);
  });
  return { servers, start };
}

describe('EraProcess', () => {
  it('starts one process for concurrent callers, opens it with server/discover, and serves 2026 requests there', async () => {
    const { servers, start } = processesOf(true);
    const { era, lines } = eraProcess(start);
    const [a, b] = await Promise.all([era.multiplexer(), era.multiplexer()]);
    expect(a).toBeDefined();
    expect(b).toBe(a);
    expect(start).toHaveBeenCalledTimes(1);
    expect(era.dual).toBe(true);
    const answer = await call(a!);
    expect(answer).toMatchObject({ id: 'c', result: { resultType: 'complete' } });
    expect(servers[0]!.read.map((m) => m.method)).toEqual(['server/discover', 'tools/call']);
    expect(await era.multiplexer()).toBe(a);
    expect(start).toHaveBeenCalledTimes(1);

    // Its stderr is logged line by line: a long line cut short, one longer across reads dropped.
    const long = 'x'.repeat(STDERR_LINE_BYTES + 1);
    servers[0]!.stderr.write('first line\nsecond ');
    servers[0]!.stderr.write(`line\n${long}\n${long}`);
    servers[0]!.stderr.write(`${long}\nafter\n`);
    await vi.waitFor(() => expect(lines.filter((l) => l.stderr !== undefined)).toHaveLength(4));
    const logged = lines.filter((l) => l.stderr !== undefined);
    expect(logged.map((l) => String(l.stderr).slice(0, 12))).toEqual([
      'first line',
      'second line',
      'xxxxxxxxxxxx',
      'after',
    ]);
    expect(logged[2]).toMatchObject({ truncated: STDERR_LINE_BYTES + 1 });
    expect(String(logged[2]!.stderr)).toHaveLength(STDERR_LINE_BYTES);
    expect(lines.some((l) => l.msg === 'stdio server wrote an oversized stderr line; dropped')).toBe(true);
    expect(lines.find((l) => l.stderr === 'first line')).toMatchObject({ process: '2026-07-28' });

    await era.close();
    expect(servers[0]!.closed).toBe(true);
    expect(await era.multiplexer()).toBeUndefined();
  });

  it('stops the process of a server that speaks no 2026-07-28, keeps the verdict, and asks again after the main process re-attached', async () => {
    const { servers, start } = processesOf(false);
    const { era } = eraProcess(start);
    expect(await era.multiplexer()).toBeUndefined();
    expect(servers[0]!.closed).toBe(true);
    expect(servers[0]!.read.map((m) => m.method)).toEqual(['server/discover']);
    expect(await era.multiplexer()).toBeUndefined();
    expect(start).toHaveBeenCalledTimes(1);
    era.mainReattached();
    expect(await era.multiplexer()).toBeUndefined();
    expect(start).toHaveBeenCalledTimes(2);
  });

  it('bridges while the process cannot start, and tries again after retryAfterMs', async () => {
    let fail = true;
    const start = vi.fn(() =>
      fail ? Promise.reject(new Error('no such container')) : Promise.resolve(scripted(true).pipes),
    );
    const { era, lines } = eraProcess(start, { retryAfterMs: 60_000 });
    expect(await era.multiplexer()).toBeUndefined();
    expect(await era.multiplexer()).toBeUndefined();
    expect(start).toHaveBeenCalledTimes(1);
    expect(lines.some((l) => String(l.err).includes('no such container'))).toBe(true);

    const { era: again } = eraProcess(
      vi.fn(() =>
        fail ? Promise.reject(new Error('no such container')) : Promise.resolve(scripted(true).pipes),
      ),
      { retryAfterMs: 0 },
    );
    expect(await again.multiplexer()).toBeUndefined();
    fail = false;
    expect(await again.multiplexer()).toBeDefined();
  });

  it('restarts a process that ended, and answers 2026 requests with a clear error once restarting gave up', async () => {
    const servers: Scripted[] = [];
    let refuse = false;
    const start = vi.fn(() => {
      if (refuse) return Promise.reject(new Error('the container is gone'));
      const server = scripted(true);
      servers.push(server);
      return Promise.resolve(server.pipes);
    });
    const { era } = eraProcess(start, { maxAttempts: 2, retryAfterMs: 60_000 });
    const mux = (await era.multiplexer())!;
    // The process ends: what it had in flight fails at once; a new one is started, and asked
    // server/discover again before serving.
    const inFlight = call(mux, 'hang');
    await vi.waitFor(() => expect(servers[0]!.read.map((m) => m.method)).toContain('tools/call'));
    servers[0]!.stdout.end();
    expect((await inFlight).error?.message).toMatch(
      /its 2026-07-28 process ended while the request was in flight \(it is restarted; send the request again\)$/,
    );
    await vi.waitFor(() => expect(start).toHaveBeenCalledTimes(2));
    expect(await call(mux)).toMatchObject({ result: { resultType: 'complete' } });
    expect(servers[1]!.read.map((m) => m.method)).toEqual(['server/discover', 'tools/call']);

    // It ends again and cannot be restarted: requests fail at once, saying why.
    refuse = true;
    servers[1]!.stdout.end();
    await vi.waitFor(() => expect(start).toHaveBeenCalledTimes(4));
    await vi.waitFor(() => expect(mux.downReason).toBeDefined());
    expect(await era.multiplexer()).toBe(mux);
    const answer = await call(mux);
    expect(answer.error?.message).toMatch(
      /^The MCP server is not available: its 2026-07-28 process ended \(the stdio MCP server could not be re-attached after 2 tries\)/,
    );
  });
});
