/**
 * A stdio MCP server (MCP SDK v1) that traces: its `echo` tool continues the trace handed to it in
 * `params._meta.traceparent` (a stdio server has no headers) with a span exported to the
 * collector named in argv[2]. Run as Moat's child over pipes.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { z } from 'zod';

const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'traced-stdio-server' }),
  spanProcessors: [
    new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${process.argv[2]}/v1/traces` }) }),
  ],
});
const tracer = provider.getTracer('traced-stdio-server');

const server = new McpServer({ name: 'traced-stdio', version: '1' });
server.registerTool(
  'echo',
  { description: 'Returns its input', inputSchema: { text: z.string() } },
  ({ text }, extra) => {
    const traceparent = extra._meta?.traceparent;
    const parent = typeof traceparent === 'string' ? parseTraceParent(traceparent) : null;
    const ctx = parent ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }) : ROOT_CONTEXT;
    tracer.startSpan('stdio-server echo', { kind: SpanKind.SERVER }, ctx).end();
    return { content: [{ type: 'text', text }] };
  },
);
await server.connect(new StdioServerTransport());

// Moat ends the server by closing its stdin: export what is left first.
process.stdin.on('end', () => void provider.shutdown().then(() => process.exit(0)));
