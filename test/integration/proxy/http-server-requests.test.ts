/**
 * Server→client requests through the HTTP forwarder: a v1 server asks the calling client a
 * question (elicitation) in the middle of a tool call; the client's answer is a JSON-RPC response
 * POSTed back through the proxy (through the client policies when some are configured).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import {
  startV1SseBackend,
  startV1StreamableBackend,
  type HttpBackendServer,
} from '../../support/mcp-http-backends.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';

describe.each([
  ['streamable HTTP', 'streamable-http' as const, false],
  ['streamable HTTP with a tool filter', 'streamable-http' as const, true],
  ['legacy SSE', 'sse' as const, false],
  ['legacy SSE with a tool filter', 'sse' as const, true],
])('elicitation through the proxy: %s', (_name, transport, filtered) => {
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  beforeAll(async () => {
    backend = transport === 'sse' ? await startV1SseBackend() : await startV1StreamableBackend();
    proxy = await startProxy(
      testConfig({ transport, ...(filtered ? { tools_filter: ['confirm'] } : {}) }),
      { kind: 'http', url: backend.url, transport, remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy.close();
    await backend.close();
  });

  it('asks the calling client and returns its answer to the server', async () => {
    const clients = await Promise.all(
      ['alice', 'bob'].map(async (name) => {
        const client = new ClientV1({ name, version: '1' }, { capabilities: { elicitation: {} } });
        const asked: string[] = [];
        client.setRequestHandler(ElicitRequestSchema, (request) => {
          asked.push(request.params.message);
          return { action: 'accept', content: { answer: `${name}-says-yes` } };
        });
        const clientTransport: Transport =
          transport === 'sse'
            ? new SSEClientTransport(new URL(`${proxy.url}/sse`))
            : new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`));
        await client.connect(clientTransport);
        return { name, client, asked };
      }),
    );
    const results = await Promise.all(
      clients.map(({ name, client }) =>
        client.callTool({ name: 'confirm', arguments: { question: `ok, ${name}?` } }),
      ),
    );
    expect(results.map((r) => r.content)).toEqual([
      [{ type: 'text', text: 'accept:alice-says-yes' }],
      [{ type: 'text', text: 'accept:bob-says-yes' }],
    ]);
    expect(clients.map((c) => c.asked)).toEqual([['ok, alice?'], ['ok, bob?']]);
    for (const { client } of clients) await client.close();
  });
});
