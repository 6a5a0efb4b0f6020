/**
 * The load generator, in its own process. argv[2] is a JSON job:
 *   {"target":"http","url":...,"concurrency":n,"requests":n,"maxMs":n}     tools/call over HTTP
 *   {"target":"stdio","command":[...],"concurrency":n,"requests":n,"maxMs":n}  tools/call over a stdio server's pipes
 *   {"target":"sessions","url":...,"concurrency":n,"requests":n,"maxMs":n}   initialize only (new sessions);
 *     with "listTools": true, each new session then says initialized and lists its tools (a client
 *     that connected, as an MCP host does before its first call)
 *   {"target":"sdk","url":...,"concurrency":n,"requests":n,"maxMs":n}        tools/call through the official
 *     MCP SDK client (v2), one client and session per worker: what an MCP host does
 *   {"target":"stateless","url":...,"concurrency":n,"requests":n,"maxMs":n}  tools/call as MCP 2026-07-28
 *     (no session: each request carries the `_meta` envelope and the Mcp-Method/Mcp-Name headers)
 * Optional "headers" are sent on every request (the policy cells' bearer token); optional "toolName"
 * is the tool called (default `echo`; an aggregate exposes it as `<member>__echo`). The HTTP target
 * opens one session and every worker sends on it (its Mcp-Session-Id).
 * Each worker keeps one request outstanding; every call has distinct arguments. Prints one JSON
 * line: {requests, seconds, rps, p50Ms, p99Ms, errors}. Bounded by request count and by time.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Pool } from 'undici';

interface Job {
  target: 'http' | 'stdio' | 'sessions' | 'sdk' | 'stateless';
  url?: string;
  command?: string[];
  concurrency: number;
  requests: number;
  maxMs: number;
  warmup?: number;
  /** Extra request headers (e.g. authorization) on every HTTP request. */
  headers?: Record<string, string>;
  /** The tool every call names (default `echo`). */
  toolName?: string;
  /** `sessions` target: list tools on each new session. */
  listTools?: boolean;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...job.headers,
};
const TOOL = job.toolName ?? 'echo';
const initBody = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
const callBody = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: TOOL, arguments: { n: id } },
  });

const STATELESS_HEADERS: Record<string, string> = {
  ...HEADERS,
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': TOOL,
};
const statelessCallBody = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: TOOL,
      arguments: { n: id },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });

/** Sends call `id` from worker `worker` (0 … concurrency-1). */
type Send = (id: number, worker: number) => Promise<void>;

async function httpSender(
  url: string,
  connections: number,
  sessions: boolean,
): Promise<{ send: Send; close(): Promise<void> }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const post = async (body: string, headers: Record<string, string>) => {
    const response = await pool.request({ path: target.pathname, method: 'POST', headers, body });
    const text = await response.body.text();
    // A 200 whose body is not a JSON-RPC result (an error, an empty stream) is a failed call.
    if (response.statusCode !== 200 || !text.includes('"result"'))
      throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    return response;
  };
  /** A new session: initialize, then notifications/initialized; the headers that carry it. */
  const open = async (id: number) => {
    const init = await post(initBody(id), HEADERS);
    const sessionId = init.headers['mcp-session-id'];
    const headers: Record<string, string> = { ...HEADERS, 'mcp-protocol-version': '2025-11-25' };
    if (typeof sessionId === 'string') headers['mcp-session-id'] = sessionId;
    await pool
      .request({
        path: target.pathname,
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      })
      .then((r) => r.body.text());
    return headers;
  };
  if (sessions && job.listTools) {
    const list = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
    return {
      send: async (id) => void (await post(list(id), await open(id))),
      close: () => pool.close(),
    };
  }
  if (sessions)
    return { send: (id) => post(initBody(id), HEADERS).then(() => undefined), close: () => pool.close() };
  if (job.target === 'stateless')
    return {
      send: (id) => post(statelessCallBody(id), STATELESS_HEADERS).then(() => undefined),
      close: () => pool.close(),
    };
  const headers = await open(0);
  return { send: (id) => post(callBody(id), headers).then(() => undefined), close: () => pool.close() };
}

async function sdkSender(url: string, workers: number): Promise<{ send: Send; close(): Promise<void> }> {
  const clients = await Promise.all(
    Array.from({ length: workers }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: job.headers ?? {} } }),
      );
      return client;
    }),
  );
  return {
    send: async (id, worker) => {
      const result = await clients[worker]!.callTool({ name: TOOL, arguments: { n: id } });
      if (result.isError) throw new Error(`tools/call failed: ${JSON.stringify(result.content)}`);
    },
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}

async function stdioSender(command: string[]): Promise<{ send: Send; close(): Promise<void> }> {
  const [file, ...args] = command;
  const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<number, () => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const id = (JSON.parse(line) as { id: number }).id;
    waiting.get(id)?.();
    waiting.delete(id);
  });
  const request = (id: number, body: string) =>
    new Promise<void>((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(`${body}\n`);
    });
  await request(0, initBody(0));
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    send: (id) => request(id, callBody(id)),
    close: async () => {
      child.kill('SIGTERM');
      await Promise.resolve();
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const sender =
    job.target === 'stdio'
      ? await stdioSender(job.command!)
      : job.target === 'sdk'
        ? await sdkSender(job.url!, job.concurrency)
        : await httpSender(job.url!, job.concurrency, job.target === 'sessions');
  let nextId = 1;
  // Warm-up (not measured), bounded.
  for (let i = 0; i < (job.warmup ?? 0); i++) await sender.send(nextId++, i % job.concurrency);

  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + job.maxMs;
  const worker = async (_: unknown, index: number) => {
    while (issued < job.requests && Date.now() < deadline) {
      issued++;
      const id = nextId++;
      const t0 = process.hrtime.bigint();
      try {
        await sender.send(id, index);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch (err) {
        if (errors++ === 0) process.stderr.write(`load: ${String(err)}\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await sender.close();
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({
      requests: latencies.length,
      seconds,
      rps: latencies.length / seconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      errors,
    })}\n`,
  );
}

await main();
