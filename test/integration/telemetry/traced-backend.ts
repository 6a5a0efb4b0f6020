/**
 * A small JSON-RPC MCP server over HTTP that also traces: it continues the trace it is handed in
 * `params._meta.traceparent` with a span of its own, exported to the same collector, and records
 * the headers and bodies it received. `tools/call fail` answers with a tool error (isError).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export interface TracedBackend {
  url: string;
  seen: Array<{ headers: IncomingHttpHeaders; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startTracedBackend(collectorUrl?: string): Promise<TracedBackend> {
  // Without a collector the spans go nowhere (no processor).
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'traced-backend' }),
    spanProcessors: collectorUrl
      ? [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${collectorUrl}/v1/traces` }) })]
      : [],
  });
  const tracer = provider.getTracer('traced-backend');
  const seen: TracedBackend['seen'] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number | string;
        method: string;
        params?: { name?: string; _meta?: { traceparent?: string } };
      };
      seen.push({ headers: req.headers, body: body });
      const parent = body.params?._meta?.traceparent ? parseTraceParent(body.params._meta.traceparent) : null;
      const ctx = parent ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }) : ROOT_CONTEXT;
      tracer.startSpan(`backend ${body.method}`, { kind: SpanKind.SERVER }, ctx).end();
      if (body.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        body.method === 'initialize'
          ? {
              protocolVersion: '2025-11-25',
              capabilities: { tools: {} },
              serverInfo: { name: 'traced', version: '1' },
            }
          : body.method === 'tools/call'
            ? body.params?.name === 'fail'
              ? { content: [{ type: 'text', text: 'it broke' }], isError: true }
              : { content: [{ type: 'text', text: 'ok' }] }
            : {};
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(body.method === 'initialize' ? { 'mcp-session-id': 'backend-session' } : {}),
      });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await provider.shutdown();
    },
  };
}
