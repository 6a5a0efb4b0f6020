/**
 * Real MCP SDK servers as members of an aggregate, on 127.0.0.1:0, stateful streamable HTTP: a v2
 * member with tools, a prompt with completions, resources with subscriptions and a template; a v1
 * member whose tool and prompt names conflict with the v2 one's. Every tool answers with the
 * member's name, so a test sees where a call went; `events` reports what a test waits on.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CreateMessageResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { completable, McpServer as McpServerV2, ResourceTemplate } from '@modelcontextprotocol/server';
import { z } from 'zod';

export interface MemberServer {
  name: string;
  /** Its MCP endpoint (`/mcp`). */
  url: string;
  /** `started` and `cancelled` (tool name) for `slow`; `subscribed` (uri). */
  events: EventEmitter;
  /** Sends `notifications/resources/updated` to every session subscribed to `uri`. */
  resourceUpdated(uri: string): Promise<void>;
  /** Forgets every session, as a restarted server would: their ids then get 404. */
  dropSessions(): Promise<void>;
  /** Adds a tool to every session (the SDK then sends `notifications/tools/list_changed`); v2 member only. */
  addTool?(tool: string): void;
  close(): Promise<void>;
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
const sampledText = (answer: { content: unknown }) => {
  const content = answer.content as { type: string; text?: string };
  return content.type === 'text' ? String(content.text) : content.type;
};

interface SessionTransport {
  handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void>;
  close(): Promise<void>;
}

/** A stateful streamable-HTTP server at /mcp: one transport per session, found by its id. */
async function serveSessions(
  createSession: (onInitialized: (id: string) => void) => Promise<SessionTransport>,
): Promise<{ url: string; dropSessions(): Promise<void>; close(): Promise<void> }> {
  const transports = new Map<string, SessionTransport>();
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!transport) {
        if (sid !== undefined) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32001, message: 'Session not found' },
            }),
          );
          return;
        }
        const created = await createSession((id) => transports.set(id, created));
        transport = created;
      }
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    dropSessions: async () => {
      const dropped = [...transports.values()];
      transports.clear();
      await Promise.all(dropped.map((t) => t.close().catch(() => {})));
    },
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close().catch(() => {})));
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

/**
 * The v2 member: `echo`, `whoami`, `progress` (progress + a log line), `slow` (waits for its
 * cancellation), `gated` (one progress notification, `started`, then waits for `release` on its
 * events), `requestId` (the JSON-RPC id its call came with), `ask` (sampling), `confirm`
 * (elicitation), `roots` (roots/list), `extra` more tools `t0…`; prompt `greet` (completable `name`);
 * resource `mem://<name>/doc` (subscribable) and template `mem://<name>/items/{id}` (completable).
 * With `json`, it answers requests with JSON rather than an event stream.
 */
export async function startV2Member(
  name: string,
  options: { extra?: number; json?: boolean } = {},
): Promise<MemberServer> {
  const events = new EventEmitter();
  const servers = new Set<McpServerV2>();
  const subscribed = new Map<McpServerV2, Set<string>>();
  const build = () => {
    const server = new McpServerV2(
      { name: `${name}-v2`, version: '2.0.0' },
      { capabilities: { logging: {}, resources: { subscribe: true } } },
    );
    server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text: t }) => text(`${name}:${t}`));
    server.registerTool('whoami', { description: `${name} says who it is` }, () => text(name));
    server.registerTool('progress', { inputSchema: { tag: z.string() } }, async ({ tag }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        for (const progress of [1, 2]) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 2, message: tag },
          });
        }
      }
      // Through the SDK's logger, so the level a client set filters it.
      await ctx.mcpReq.log('info', `log:${tag}`);
      return text(`${name}:done:${tag}`);
    });
    server.registerTool('slow', {}, async (ctx) => {
      events.emit('started', 'slow');
      await new Promise<void>((resolve) => {
        if (ctx.mcpReq.signal.aborted) resolve();
        ctx.mcpReq.signal.addEventListener('abort', () => resolve());
      });
      events.emit('cancelled', 'slow');
      return text('aborted');
    });
    server.registerTool('gated', {}, async (ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined)
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1 },
        });
      const released = once(events, 'release');
      events.emit('started', 'gated');
      await released;
      return text(`${name}:released`);
    });
    server.registerTool('requestId', {}, (ctx) => text(String(ctx.mcpReq.id)));
    server.registerTool('ask', { inputSchema: { question: z.string() } }, async ({ question }, ctx) => {
      const answer = await ctx.mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: question } }],
        maxTokens: 10,
      });
      return text(`${name} heard ${sampledText(answer)}`);
    });
    server.registerTool('confirm', { inputSchema: { question: z.string() } }, async ({ question }, ctx) => {
      const answer = await ctx.mcpReq.elicitInput({
        message: question,
        requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } },
      });
      return text(`${name} got ${answer.action}:${String(answer.content?.answer)}`);
    });
    server.registerTool('roots', {}, async (ctx) => {
      const { roots } = await ctx.mcpReq.send({ method: 'roots/list' });
      return text(`${name} sees ${roots.map((r) => r.uri).join(',')}`);
    });
    for (let i = 0; i < (options.extra ?? 0); i++) {
      server.registerTool(`t${i}`, {}, () => text(`${name}:t${i}`));
    }
    server.registerPrompt(
      'greet',
      {
        argsSchema: {
          who: completable(z.string(), (v) => ['alice', 'albert', 'bob'].filter((n) => n.startsWith(v))),
        },
      },
      ({ who }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `${name} greets ${who}` } }],
      }),
    );
    server.registerResource('doc', `mem://${name}/doc`, { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: `${name} doc` }],
    }));
    server.registerResource(
      'item',
      new ResourceTemplate(`mem://${name}/items/{id}`, {
        list: undefined,
        complete: { id: (v) => ['7', '8', '17'].filter((id) => id.startsWith(v)) },
      }),
      {},
      (uri, { id }) => ({ contents: [{ uri: uri.href, text: `${name} item ${String(id)}` }] }),
    );
    const mine = new Set<string>();
    subscribed.set(server, mine);
    server.server.setRequestHandler('resources/subscribe', (req) => {
      mine.add(req.params.uri);
      events.emit('subscribed', req.params.uri);
      return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', (req) => {
      mine.delete(req.params.uri);
      return {};
    });
    servers.add(server);
    return server;
  };
  const served = await serveSessions(async (onInitialized) => {
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: onInitialized,
      enableJsonResponse: options.json === true,
    });
    await build().connect(transport);
    return transport;
  });
  return {
    name,
    url: served.url,
    events,
    resourceUpdated: async (uri) => {
      for (const [server, uris] of subscribed)
        // Sessions dropped (dropSessions) are no longer connected: skipped.
        if (uris.has(uri) && server.isConnected()) await server.server.sendResourceUpdated({ uri });
    },
    addTool: (tool) => {
      for (const server of servers) server.registerTool(tool, {}, () => text(`${name}:${tool}`));
    },
    dropSessions: () => served.dropSessions(),
    close: () => served.close(),
  };
}

/** The v1 member: `echo`, `whoami`, `secret`, `ask` (sampling); prompt `greet`; resource `mem://<name>/doc`. */
export async function startV1Member(name: string): Promise<MemberServer> {
  const events = new EventEmitter();
  const served = await serveSessions(async (onInitialized) => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: onInitialized,
    });
    const server = new McpServerV1(
      { name: `${name}-v1`, version: '1.0.0' },
      { capabilities: { logging: {} } },
    );
    server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text: t }) => text(`${name}:${t}`));
    server.registerTool('whoami', {}, () => text(name));
    server.registerTool('secret', {}, () => text(`${name} secret`));
    server.registerTool('ask', { inputSchema: { question: z.string() } }, async ({ question }, extra) => {
      const answer = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: question } }], maxTokens: 10 },
        },
        CreateMessageResultSchema,
      );
      return text(`${name} heard ${sampledText(answer)}`);
    });
    server.registerPrompt('greet', { argsSchema: { who: z.string() } }, ({ who }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `${name} greets ${who}` } }],
    }));
    server.registerResource('doc', `mem://${name}/doc`, { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: `${name} doc` }],
    }));
    await server.connect(transport);
    return transport;
  });
  return {
    name,
    url: served.url,
    events,
    resourceUpdated: () => Promise.resolve(),
    dropSessions: () => served.dropSessions(),
    close: () => served.close(),
  };
}
