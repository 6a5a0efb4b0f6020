/**
 * --tools and --tools-override over every HTTP backend shape: JSON responses, SSE-framed
 * responses on the POST, and legacy SSE where responses arrive on the GET stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SseTransportV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import {
  startV1SseBackend,
  startV1StreamableBackend,
  startV2StreamableBackend,
  type HttpBackendServer,
} from '../../support/mcp-http-backends.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';

const FILTER = {
  tools_filter: ['echo', 'sum'],
  tools_override: { add: { name: 'sum', description: 'Adds two numbers (renamed by the proxy)' } },
};

describe.each([
  ['streamable HTTP, SSE-framed responses', () => startV1StreamableBackend(), 'streamable-http' as const],
  [
    'streamable HTTP, JSON responses',
    () => startV1StreamableBackend({ json: true }),
    'streamable-http' as const,
  ],
  ['streamable HTTP, v2 server', () => startV2StreamableBackend(), 'streamable-http' as const],
  ['legacy SSE', () => startV1SseBackend(), 'sse' as const],
])('tool filter and override: %s', (_name, start, transport) => {
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  let client: ClientV1;
  beforeAll(async () => {
    backend = await start();
    proxy = await startProxy(
      testConfig({ transport, ...FILTER }),
      { kind: 'http', url: backend.url, transport, remote: false },
      { logger: memoryLogger().logger },
    );
    client = new ClientV1({ name: 'tools', version: '1' });
    const clientTransport: Transport =
      transport === 'sse'
        ? new SseTransportV1(new URL(`${proxy.url}/sse`))
        : new TransportV1(new URL(`${proxy.url}/mcp`));
    await client.connect(clientTransport);
  });
  afterAll(async () => {
    await client.close();
    await proxy.close();
    await backend.close();
  });

  it('lists only the allowed tools, renamed and re-described, other fields kept', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'sum']);
    const sum = tools.find((t) => t.name === 'sum');
    expect(sum?.description).toBe('Adds two numbers (renamed by the proxy)');
    expect(sum?.inputSchema.properties).toHaveProperty('a');
    expect(tools.find((t) => t.name === 'echo')?.description).toBe('Echoes text');
  });

  it('maps a call to the exposed name back to the server name', async () => {
    const result = await client.callTool({ name: 'sum', arguments: { a: 20, b: 22 } });
    expect(result.content).toEqual([{ type: 'text', text: '42' }]);
    expect(backend.seen.length).toBeGreaterThan(0);
  });

  it('refuses calls to hidden tools and to the old name of a renamed tool, naming the tool', async () => {
    const secret = client.callTool({ name: 'secret', arguments: {} });
    await expect(secret).rejects.toBeInstanceOf(McpError);
    await expect(secret).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('secret') });
    await expect(client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('exposed as "sum"'),
    });
    // The connection is still fine afterwards.
    expect((await client.callTool({ name: 'echo', arguments: { text: 'ok' } })).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
  });
});
