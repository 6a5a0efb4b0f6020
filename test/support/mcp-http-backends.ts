/**
 * Real MCP SDK servers used as HTTP backends behind the proxy, on 127.0.0.1:0: v1 streamable
 * HTTP (stateful; JSON or SSE responses), v1 legacy HTTP+SSE, and v2 streamable HTTP. They share
 * one small tool set, and record the requests they receive so tests can check what went upstream.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { z } from 'zod';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface HttpBackendServer {
  /** The MCP endpoint URL (`/mcp`, or `/sse` for the legacy server). */
  url: string;
  /** Requests the backend received, in order. */
  seen: SeenRequest[];
  /** Session ids the backend minted. */
  sessionIds: string[];
  /** Ends every session at the backend (a restarted server): their ids then get 404. */
  dropSessions?(): Promise<void>;
  close(): Promise<void>;
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** The tools every backend offers. `progress` sends progress and log notifications first. */
function registerToolsV1(server: McpServerV1): void {
  server.registerTool(
    'echo',
    { description: 'Echoes text', inputSchema: { text: z.string() } },
    ({ text: t }) => text(t),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => text(String(a + b)),
  );
  server.registerTool('secret', { description: 'A tool the filter hides' }, () => text('the secret'));
  server.registerTool(
    'progress',
    { description: 'Reports progress and logs', inputSchema: { tag: z.string() } },
    async ({ tag }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) {
        for (const progress of [1, 2]) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 2, message: tag },
          });
        }
      }
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: `log:${tag}` },
      });
      return text(`done:${tag}`);
    },
  );
  server.registerTool(
    'confirm',
    {
      description: 'Asks the calling client a question (elicitation)',
      inputSchema: { question: z.string() },
    },
    async ({ question }, extra) => {
      const answer = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            message: question,
            requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } },
          },
        },
        ElicitResultSchema,
      );
      return text(`${answer.action}:${String(answer.content?.answer)}`);
    },
  );
  server.registerTool(
    'later',
    { description: 'Logs outside any request, shortly after answering', inputSchema: { tag: z.string() } },
    ({ tag }) => {
      setTimeout(
        () => void server.sendLoggingMessage({ level: 'info', data: `later:${tag}` }).catch(() => {}),
        100,
      );
      return text('scheduled');
    },
  );
}

function registerToolsV2(server: McpServerV2): void {
  server.registerTool(
    'echo',
    { description: 'Echoes text', inputSchema: { text: z.string() } },
    ({ text: t }) => text(t),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => text(String(a + b)),
  );
  server.registerTool('secret', { description: 'A tool the filter hides' }, () => text('the secret'));
  server.registerTool(
    'progress',
    { description: 'Reports progress and logs', inputSchema: { tag: z.string() } },
    async ({ tag }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        for (const progress of [1, 2]) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 2, message: tag },
          });
        }
      }
      await ctx.mcpReq.notify({
        method: 'notifications/message',
        params: { level: 'info', data: `log:${tag}` },
      });
      return text(`done:${tag}`);
    },
  );
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

interface SessionTransport {
  handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void>;
  close(): Promise<void>;
}

/**
 * A stateful streamable-HTTP backend at /mcp: a new transport (and server) per initialize, found
 * again by its session id; an unknown id gets 404.
 */
async function startSessionBackend(
  createSession: (onInitialized: (id: string) => void) => Promise<SessionTransport>,
  bearer: (() => string) | undefined,
  keepAliveMs?: number,
): Promise<HttpBackendServer> {
  const seen: SeenRequest[] = [];
  const sessionIds: string[] = [];
  const transports = new Map<string, SessionTransport>();
  const http = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    // Redirects for the forwarder's redirect rules: /moved stays on this origin, /away leaves it.
    if (req.url?.startsWith('/moved') || req.url?.startsWith('/away')) {
      const location = req.url.startsWith('/moved') ? '/mcp' : 'http://elsewhere.invalid/mcp';
      res.writeHead(req.url.startsWith('/moved') ? 308 : 307, { location }).end();
      return;
    }
    if (bearer && req.headers.authorization !== `Bearer ${bearer()}`) {
      res.writeHead(401, { 'www-authenticate': 'Bearer realm="backend"' }).end();
      return;
    }
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!transport) {
        if (sid !== undefined) {
          const error = { code: -32001, message: 'Session not found' };
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
          return;
        }
        const created = await createSession((id) => {
          sessionIds.push(id);
          transports.set(id, created);
        });
        transport = created;
      }
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  if (keepAliveMs !== undefined) {
    // Idle connections close exactly then (Node adds a 1 s grace by default).
    http.keepAliveTimeout = keepAliveMs;
    http.keepAliveTimeoutBuffer = 0;
  }
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    sessionIds,
    dropSessions: async () => {
      for (const t of transports.values()) await t.close();
      transports.clear();
    },
    close: async () => {
      for (const t of transports.values()) await t.close();
      await closeServer(http);
    },
  };
}

/** v1 StreamableHTTPServerTransport (SSE or JSON responses, resumable), at /mcp. */
export function startV1StreamableBackend(
  options: { json?: boolean; bearer?: () => string } = {},
): Promise<HttpBackendServer> {
  return startSessionBackend(async (onInitialized) => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: options.json === true,
      eventStore: new InMemoryEventStore(),
      onsessioninitialized: onInitialized,
    });
    const server = new McpServerV1(
      { name: 'v1-streamable', version: '1.0.0' },
      { capabilities: { logging: {} } },
    );
    registerToolsV1(server);
    await server.connect(transport);
    return transport;
  }, options.bearer);
}

/** v1 StreamableHTTPServerTransport without sessions (a new server per request, JSON answers), at /mcp. */
export async function startV1StatelessBackend(): Promise<HttpBackendServer> {
  const seen: SeenRequest[] = [];
  const http = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    void (async () => {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      const server = new McpServerV1({ name: 'v1-stateless', version: '1.0.0' });
      registerToolsV1(server);
      res.once('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, seen, sessionIds: [], close: () => closeServer(http) };
}

/**
 * v2 NodeStreamableHTTPServerTransport, stateful, at /mcp. `keepAliveMs`: how long the backend
 * keeps an idle connection open (Node's default otherwise).
 */
export function startV2StreamableBackend(options: { keepAliveMs?: number } = {}): Promise<HttpBackendServer> {
  return startSessionBackend(
    async (onInitialized) => {
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: onInitialized,
      });
      const server = new McpServerV2(
        { name: 'v2-streamable', version: '2.0.0' },
        { capabilities: { logging: {} } },
      );
      registerToolsV2(server);
      await server.connect(transport);
      return transport;
    },
    undefined,
    options.keepAliveMs,
  );
}

/** v2 createMcpHandler: serves the 2026-07-28 revision (and stateless 2025 traffic) per request. */
export async function startV2StatelessBackend(): Promise<HttpBackendServer> {
  const seen: SeenRequest[] = [];
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServerV2({ name: 'v2-stateless', version: '2.0.0' });
      registerToolsV2(server);
      return server;
    }),
  );
  const http = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    Promise.resolve(handler(req, res)).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, seen, sessionIds: [], close: () => closeServer(http) };
}

/** v1 SSEServerTransport: GET /sse opens the stream, POST /messages?sessionId=… sends. */
export async function startV1SseBackend(): Promise<HttpBackendServer> {
  const seen: SeenRequest[] = [];
  const sessionIds: string[] = [];
  const transports = new Map<string, SSEServerTransport>();
  const http = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://backend');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        sessionIds.push(transport.sessionId);
        transport.onclose = () => transports.delete(transport.sessionId);
        const server = new McpServerV1(
          { name: 'v1-sse', version: '1.0.0' },
          { capabilities: { logging: {} } },
        );
        registerToolsV1(server);
        await server.connect(transport);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = transports.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          res.writeHead(404).end('unknown session');
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}/sse`,
    seen,
    sessionIds,
    close: async () => {
      for (const t of transports.values()) await t.close();
      await closeServer(http);
    },
  };
}
