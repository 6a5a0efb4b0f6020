/**
 * Moat's span handed on to backends that are not plain streamable HTTP, against a real collector:
 * a stdio server (an MCP SDK server that reads `params._meta.traceparent`, as a stdio server has
 * no headers) and a legacy HTTP+SSE server behind the relay (header and `_meta`); and export over
 * OTLP/gRPC to the collector's gRPC receiver.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../../src/proxy/index.js';
import { startV1SseBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { startCollector, type Collector } from '../../support/otel-collector.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

const TRACED_STDIO_SERVER = fileURLToPath(new URL('./traced-stdio-server.ts', import.meta.url));
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

let collector: Collector;
const children: ChildProcess[] = [];

beforeAll(async () => {
  collector = await startCollector();
}, 30_000);

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
  await collector?.stop();
});

describe('trace context to a stdio server', () => {
  it("reaches the server in params._meta, so the server's span is a child of Moat's", async () => {
    const proxy = await startProxy(
      testConfig({
        name: 'stdio-traced',
        transport: 'stdio',
        telemetry_config: { endpoint: collector.endpoint, samplingRate: '1' },
      }),
      {
        kind: 'stdio',
        connect: () => {
          const child = spawn(
            process.execPath,
            ['--import', 'tsx', TRACED_STDIO_SERVER, collector.endpoint],
            {
              stdio: ['pipe', 'pipe', 'inherit'],
              env: { ...process.env, NODE_OPTIONS: '' },
            },
          );
          children.push(child);
          return Promise.resolve({
            stdin: child.stdin,
            stdout: child.stdout,
            close: () => child.stdin.end(),
          });
        },
      },
      { logger: memoryLogger().logger },
    );
    try {
      const init = await post(proxy.endpoint, INIT_BODY);
      const headers = {
        'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
        'mcp-protocol-version': '2025-11-25',
      };
      await post(proxy.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
      const call = await post(
        proxy.endpoint,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
        { ...headers, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      );
      expect(JSON.stringify(call.json)).toContain('hi');
    } finally {
      await proxy.close();
    }
    const moatSpan = await collector.waitFor("Moat's tools/call span", (c) =>
      c.spans().find((s) => s.service === 'moat-stdio-traced' && s.name === 'tools/call echo'),
    );
    expect(moatSpan.traceId).toBe(CLIENT_TRACE);
    expect(moatSpan.parentId).toBe(CLIENT_SPAN);
    const serverSpan = await collector.waitFor("the stdio server's span", (c) =>
      c.spans().find((s) => s.service === 'traced-stdio-server' && s.name === 'stdio-server echo'),
    );
    expect(serverSpan.traceId).toBe(CLIENT_TRACE);
    expect(serverSpan.parentId).toBe(moatSpan.id);
  }, 60_000);
});

describe('trace context through the legacy HTTP+SSE relay', () => {
  let backend: HttpBackendServer;
  beforeAll(async () => {
    backend = await startV1SseBackend();
  });
  afterAll(async () => {
    await backend?.close();
  });

  it("reaches the server as a traceparent header naming Moat's span", async () => {
    const proxy = await startProxy(
      testConfig({
        name: 'sse-traced',
        transport: 'sse',
        telemetry_config: { endpoint: collector.endpoint, samplingRate: '1' },
      }),
      { kind: 'http', url: backend.url, transport: 'sse', remote: false },
      { logger: memoryLogger().logger },
    );
    try {
      const client = new Client({ name: 'sse-client', version: '1' });
      await client.connect(new SSEClientTransport(new URL(`${proxy.url}/sse`)));
      await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      await client.close();
    } finally {
      await proxy.close();
    }
    const moatSpan = await collector.waitFor("Moat's tools/call span", (c) =>
      c.spans().find((s) => s.service === 'moat-sse-traced' && s.name === 'tools/call echo'),
    );
    const posted = backend.seen.filter((r) => r.method === 'POST').map((r) => r.headers.traceparent);
    expect(posted).toContain(`00-${moatSpan.traceId}-${moatSpan.id}-01`);
  }, 60_000);
});

describe('OTLP over gRPC', () => {
  it("exports spans and metrics to the collector's gRPC receiver (protocol: grpc)", async () => {
    const backend = await startV1SseBackend();
    const proxy = await startProxy(
      testConfig({
        name: 'grpc-export',
        transport: 'sse',
        telemetry_config: {
          endpoint: collector.grpcEndpoint,
          insecure: true,
          protocol: 'grpc',
          samplingRate: '1',
          headers: { 'x-team': 'platform' },
        },
      }),
      { kind: 'http', url: backend.url, transport: 'sse', remote: false },
      { logger: memoryLogger().logger },
    );
    try {
      const client = new Client({ name: 'grpc-client', version: '1' });
      await client.connect(new SSEClientTransport(new URL(`${proxy.url}/sse`)));
      // A tool no other test here calls, so its metric point can only have come over gRPC.
      await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
      await client.close();
    } finally {
      await proxy.close(); // flushes spans and metrics
      await backend.close();
    }
    const span = await collector.waitFor('the span exported over gRPC', (c) =>
      c.spans().find((s) => s.service === 'moat-grpc-export' && s.name === 'tools/call add'),
    );
    expect(span.attributes['gen_ai.tool.name']).toBe('add');
    const point = await collector.waitFor('a duration point exported over gRPC', (c) =>
      c
        .points()
        .find(
          (p) => p.metric === 'mcp.server.operation.duration' && p.attributes['gen_ai.tool.name'] === 'add',
        ),
    );
    expect(point.value).toBe(1);
  }, 60_000);
});
