/**
 * The stateless 2026-07-28 revision through the proxy: a real v2 client pinned to 2026-07-28
 * and a real v2 stateless server; Mcp-Method/Mcp-Name checked against the body; no sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV2StatelessBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

const MODERN = '2026-07-28';

describe('MCP 2026-07-28 (stateless) through the proxy', () => {
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  beforeAll(async () => {
    backend = await startV2StatelessBackend();
    proxy = await startProxy(
      testConfig({ tools_filter: ['echo', 'add'] }),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy.close();
    await backend.close();
  });

  it('serves a v2 client pinned to 2026-07-28, with the tool filter applied', async () => {
    const client = new ClientV2(
      { name: 'modern', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    const transport = new TransportV2(new URL(`${proxy.url}/mcp`));
    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['add', 'echo']);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'héllo' } });
    expect(result.content).toEqual([{ type: 'text', text: 'héllo' }]);
    // Stateless: the proxy minted no session.
    expect(transport.sessionId).toBeUndefined();
    const modern = backend.seen.filter((r) => r.headers['mcp-protocol-version'] === MODERN);
    expect(modern.length).toBeGreaterThan(0);
    expect(modern.every((r) => r.headers['mcp-session-id'] === undefined)).toBe(true);
    await client.close();
  });

  const call = (name: string) => ({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name, arguments: { text: 'x' }, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
  });

  it.each([
    ['a missing Mcp-Method', { 'mcp-name': 'echo' }],
    ['an Mcp-Method that differs from the body', { 'mcp-method': 'tools/list', 'mcp-name': 'echo' }],
    ['a missing Mcp-Name', { 'mcp-method': 'tools/call' }],
    ['an Mcp-Name that differs from the body', { 'mcp-method': 'tools/call', 'mcp-name': 'add' }],
  ])('refuses %s with 400 and -32020', async (_what, headers) => {
    const before = backend.seen.length;
    const res = await post(`${proxy.url}/mcp`, call('echo'), { 'mcp-protocol-version': MODERN, ...headers });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32020 } });
    expect(backend.seen.length).toBe(before);
  });

  it('accepts a Base64-sentinel Mcp-Name that decodes to the body value', async () => {
    const name = 'échо';
    const res = await post(`${proxy.url}/mcp`, call(name), {
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': `=?base64?${Buffer.from(name).toString('base64')}?=`,
    });
    // The header check passed; the tool filter then refuses the unknown tool by name.
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: 7,
      error: { code: -32602, message: expect.stringContaining(name) },
    });
  });

  it('answers GET and DELETE with 405 and Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${proxy.url}/mcp`, {
        method,
        headers: { 'mcp-protocol-version': MODERN, accept: 'text/event-stream' },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    }
  });
});
