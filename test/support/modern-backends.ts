/**
 * 2026-07-28-only MCP servers built with the real v2 SDK (`createMcpHandler` with
 * `legacy: 'reject'`: no `initialize`, no sessions, no GET stream), on 127.0.0.1:0, for the tests
 * of what the proxy adds in front of them. They record the requests they receive.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  acceptedContent,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  McpServer,
  Server,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { HttpBackendServer, SeenRequest } from './mcp-http-backends.js';

export interface ModernBackend extends HttpBackendServer {
  /** The request bodies the backend received, parsed, in order. */
  bodies: Array<Record<string, unknown>>;
  /** Tells `subscriptions/listen` streams that a resource changed. */
  resourceUpdated(uri: string): void;
}

async function serve(handler: McpHttpHandler): Promise<ModernBackend> {
  const seen: SeenRequest[] = [];
  const bodies: Array<Record<string, unknown>> = [];
  const node = toNodeHandler(handler);
  const http = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    // Read whole first, then handed to the SDK already parsed (its third argument).
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
      if (body) bodies.push(body);
      Promise.resolve(node(req, res, body)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(err));
      });
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve((http.address() as AddressInfo).port));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    bodies,
    sessionIds: [],
    resourceUpdated: (uri) => handler.notify.resourceUpdated(uri),
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

/** `x-mcp-header` is an extension keyword the SDK's JSON Schema type does not name. */
const ROUTE_SCHEMA = {
  type: 'object',
  properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
  required: ['region'],
} as Parameters<typeof fromJsonSchema>[0];

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
export const WATCHED = 'test://watched';

/**
 * A 2026-only server (v2 `McpServer`): `echo`, `confirm` (asks the client through an
 * `input_required` round: one elicitation, with `requestState`), `route` (an `x-mcp-header`
 * argument), a subscribable resource, and instructions.
 */
export function startModernOnlyBackend(): Promise<ModernBackend> {
  const handler = createMcpHandler(
    () => {
      const server = new McpServer(
        { name: 'modern-only', version: '3.0.0' },
        { capabilities: { logging: {}, resources: { subscribe: true } }, instructions: 'Be brief.' },
      );
      server.registerTool(
        'echo',
        { description: 'Echoes text', inputSchema: z.object({ text: z.string() }) },
        ({ text: t }) => text(t),
      );
      const answer = z.object({ answer: z.string() });
      server.registerTool(
        'confirm',
        { description: 'Asks the client a question', inputSchema: z.object({ question: z.string() }) },
        ({ question }, ctx) => {
          const content = acceptedContent(ctx.mcpReq.inputResponses, 'ask', answer);
          if (content === undefined) {
            return inputRequired({
              inputRequests: { ask: inputRequired.elicit({ message: question, requestedSchema: answer }) },
              requestState: `asked:${question}`,
            });
          }
          const state = ctx.mcpReq.requestState();
          return text(`${typeof state === 'string' ? state : 'no-state'}:${content.answer}`);
        },
      );
      // The SDK checks this tool's `Mcp-Param-Region` header against the body itself.
      server.registerTool(
        'route',
        {
          description: 'Routes by region',
          inputSchema: fromJsonSchema<{ region: string }>(ROUTE_SCHEMA),
        },
        ({ region }) => text(`routed:${region}`),
      );
      server.registerResource('watched', WATCHED, { mimeType: 'text/plain' }, () => ({
        contents: [{ uri: WATCHED, text: 'watched' }],
      }));
      return server;
    },
    { legacy: 'reject' },
  );
  return serve(handler);
}

/**
 * A 2026-only server whose `tools/list` declares `x-mcp-header` custom headers, built on the v2
 * low-level `Server`: unlike `McpServer`, the SDK then does not check `Mcp-Param-*` headers itself,
 * so any refusal a test sees comes from the proxy. Its `tools/list` answers are `public` for 60 s.
 */
export function startUncheckedParamHeaderBackend(): Promise<ModernBackend> {
  const handler = createMcpHandler(
    () => {
      const server = new Server(
        { name: 'param-headers', version: '1.0.0' },
        // A shared cache may keep this list for a minute (the proxy may narrow, never widen, it).
        {
          capabilities: { tools: {} },
          cacheHints: { 'tools/list': { ttlMs: 60_000, cacheScope: 'public' } },
        },
      );
      server.setRequestHandler('tools/list', () => ({
        tools: [
          {
            name: 'route',
            description: 'Routes by region',
            inputSchema: {
              type: 'object' as const,
              properties: {
                region: { type: 'string', 'x-mcp-header': 'Region' },
                priority: { type: 'integer', 'x-mcp-header': 'Priority' },
                query: { type: 'string' },
              },
              required: ['region'],
            },
          },
        ],
      }));
      server.setRequestHandler('tools/call', (request) =>
        text(JSON.stringify(request.params.arguments ?? {})),
      );
      return server;
    },
    { legacy: 'reject' },
  );
  return serve(handler);
}
