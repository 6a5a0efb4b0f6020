/**
 * A minimal MCP server as users write them: the official SDK (v2) over streamable HTTP,
 * stateful sessions, one `echo` tool, the SDK's default responses (SSE-framed). With the SDK
 * client in bench/load.ts ("sdk" target) this is the protocol-correct cell of the benchmark.
 * Prints {"url"} when listening.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

const sessions = new Map<string, NodeStreamableHTTPServerTransport>();

async function newSession(): Promise<NodeStreamableHTTPServerTransport> {
  const transport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => void sessions.set(id, transport),
  });
  const server = new McpServer({ name: 'bench-sdk', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes n', inputSchema: z.object({ n: z.number() }) },
    ({ n }) => ({
      content: [{ type: 'text', text: String(n) }],
    }),
  );
  await server.connect(transport);
  return transport;
}

const http = createServer((req, res) => {
  const id = req.headers['mcp-session-id'];
  const existing = typeof id === 'string' ? sessions.get(id) : undefined;
  void (existing ? Promise.resolve(existing) : newSession())
    .then((transport) => transport.handleRequest(req, res))
    .catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
});
http.keepAliveTimeout = 60_000;
http.listen(0, '127.0.0.1', () => {
  const { port } = http.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.on('SIGTERM', () => http.close(() => process.exit(0)));
