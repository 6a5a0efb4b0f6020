/**
 * A hostile MCP backend (a fake written here: no real server frames its answers this badly on
 * demand): a streamable-HTTP server whose answers to `tools/list` and `tools/call` are scripted
 * byte by byte — any label, casing, byte order mark, line ends, chunking — so tests and the fuzzer
 * can check that the proxy screens what a client could read, whatever the framing. It also holds
 * the client's GET stream, on which it can push anything.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonRpcId } from '../../src/mcp/jsonrpc.js';
import type { RunConfigInput } from '../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../src/proxy/index.js';
import { memoryLogger, testConfig } from './proxy-harness.js';

/** The tool a policy hides, and the one it lets through. */
export const HIDDEN_TOOL = 'secret_tool';
export const VISIBLE_TOOL = 'visible_tool';

/** What the backend sends for one request: its status, headers and body chunks, in order. */
export interface ScriptedAnswer {
  status?: number;
  headers: Record<string, string>;
  chunks: Array<string | Buffer | typeof WAIT>;
  /** Leave the response open after the chunks (until `release()` or the backend closes). */
  open?: boolean;
  /** Sent on the held GET stream once the answer's head is out. */
  onGet?: string;
}

export type Script = (method: string, id: JsonRpcId) => ScriptedAnswer;

export interface HostileBackend {
  url: string;
  /** Sets how `tools/list` and `tools/call` (and any other method but initialize) are answered. */
  script(script: Script): void;
  /** Ends every response left open, and lets a waiting chunk go. */
  release(): void;
  /** Resolves once a GET stream is held (at once if one is). */
  getStreamOpen(): Promise<void>;
  close(): Promise<void>;
}

/** A `tools/list` result with both tools, as a JSON-RPC text for request `id`. */
export function toolsListText(id: JsonRpcId): string {
  const tool = (name: string) => ({ name, description: `the ${name}`, inputSchema: { type: 'object' } });
  return JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [tool(VISIBLE_TOOL), tool(HIDDEN_TOOL)] } });
}

const INITIALIZE_RESULT = {
  protocolVersion: '2025-11-25',
  capabilities: { tools: { listChanged: true } },
  serverInfo: { name: 'hostile', version: '1.0.0' },
};

/** The marker in a chunk list where the backend waits for `release()` before going on. */
export const WAIT = Symbol('wait for release');

export async function startHostileBackend(): Promise<HostileBackend> {
  let script: Script = (_method, id) => ({
    headers: { 'content-type': 'application/json' },
    chunks: [toolsListText(id)],
  });
  const open = new Set<ServerResponse>();
  /** The GET stream held, and those waiting for one. */
  let get: ServerResponse | undefined;
  let waitingForGet: Array<(res: ServerResponse) => void> = [];
  const heldGet = (): Promise<ServerResponse> =>
    get && !get.destroyed && !get.writableEnded
      ? Promise.resolve(get)
      : new Promise((resolve) => waitingForGet.push(resolve));
  let released: () => void = () => {};
  let releasedAt = new Promise<void>((resolve) => (released = resolve));

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      get = res;
      open.add(res);
      for (const waiting of waitingForGet) waiting(res);
      waitingForGet = [];
      return;
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: JsonRpcId; method?: string };
    if (message.id === undefined || message.method === undefined) return void res.writeHead(202).end();
    if (message.method === 'initialize') {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'hostile-session' });
      return void res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INITIALIZE_RESULT }));
    }
    const scripted = script(message.method, message.id);
    res.writeHead(scripted.status ?? 200, scripted.headers);
    res.flushHeaders();
    if (scripted.onGet !== undefined) (await heldGet()).write(scripted.onGet);
    for (const chunk of scripted.chunks) {
      if (chunk === WAIT) await releasedAt;
      else if (!res.write(chunk)) await once(res, 'drain');
    }
    if (scripted.open) open.add(res);
    else res.end();
  };

  const server: Server = createServer((req, res) => {
    answer(req, res).catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    script: (next) => {
      script = next;
    },
    release: () => {
      released();
      releasedAt = new Promise<void>((resolve) => (released = resolve));
      for (const res of open) if (res !== get) res.end();
    },
    getStreamOpen: () => heldGet().then(() => undefined),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** The proxy in front of a hostile backend (the streamable-HTTP forwarder), with `config`. */
export function proxyInFrontOf(
  backend: HostileBackend,
  config: Partial<RunConfigInput> = {},
): Promise<RunningProxy> {
  return startProxy(
    testConfig(config),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
}
