/**
 * Tool search (`tool_search`) in front of real MCP SDK servers, with the tool filter, Cedar and
 * audit on: a real SDK client sees only find_tool and call_tool, finds and calls the tools it may
 * use, and neither finds nor reaches the ones the filter hides or Cedar forbids; the audit log
 * names the real tool of a call_tool. The same in front of a stdio server, and for sessionless
 * 2026-07-28 requests in front of a server of that revision and of a 2025 one behind the era bridge.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import {
  startV1SseBackend,
  startV1StreamableBackend,
  type HttpBackendServer,
} from '../../support/mcp-http-backends.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { startModernOnlyBackend } from '../../support/modern-backends.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';
import { STATELESS_REVISION } from '../../../src/mcp/revisions.js';

interface Found {
  tools: Array<{ name: string; description?: string; inputSchema: { properties?: Record<string, unknown> } }>;
  searched: number;
}

/** Cedar allowing every tool but one. */
function cedarForbidding(tool: string) {
  return {
    version: '1.0',
    type: 'cedarv1',
    cedar: {
      policies: [
        'permit(principal, action == Action::"call_tool", resource);',
        `forbid(principal, action == Action::"call_tool", resource == Tool::"${tool}");`,
      ],
    },
  };
}

/** What a call's failure looks like to the client, without the request id it carried. */
async function failure(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    return String(err).replace(/"id":\d+/g, '"id":N');
  }
  throw new Error('the call succeeded');
}

describe.each([
  ['streamable HTTP', () => startV1StreamableBackend(), 'streamable-http' as const],
  ['legacy SSE', () => startV1SseBackend(), 'sse' as const],
])('tool search with the tool filter, Cedar and audit: %s', (_name, start, transport) => {
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  let client: Client;
  let dir: string;
  let auditFile: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'moat-tool-search-'));
    auditFile = join(dir, 'audit.jsonl');
    backend = await start();
    proxy = await startProxy(
      testConfig({
        transport,
        tool_search: true,
        // `secret` is hidden by the filter, `add` forbidden by Cedar.
        tools_filter: ['echo', 'add', 'progress', 'confirm', 'later'],
        authz_config: cedarForbidding('add'),
        audit_config: { component: 'tool-search', logFile: auditFile },
      }),
      { kind: 'http', url: backend.url, transport, remote: false },
      { logger: memoryLogger().logger },
    );
    client = new Client({ name: 'tool-search', version: '1' });
    const clientTransport: Transport =
      transport === 'sse'
        ? new SSEClientTransport(new URL(`${proxy.url}/sse`))
        : new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`));
    await client.connect(clientTransport);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const find = async (query: string, limit?: number): Promise<Found> => {
    const result = await client.callTool({
      name: 'find_tool',
      arguments: { query, ...(limit === undefined ? {} : { limit }) },
    });
    expect(result.isError).toBeFalsy();
    const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
    expect(JSON.parse(text)).toEqual(result.structuredContent);
    return result.structuredContent as Found;
  };

  it('lists only find_tool and call_tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['find_tool', 'call_tool']);
    expect(tools[0]?.inputSchema.required).toEqual(['query']);
  });

  it('finds the right tool, with its schema, among only what the filter and Cedar leave', async () => {
    const found = await find('repeat my text back to me', 3);
    expect(found.tools[0]?.name).toBe('echo');
    expect(found.tools[0]?.inputSchema.properties).toHaveProperty('text');
    // Five pass the filter, Cedar forbids one: four searched.
    expect(found.searched).toBe(4);
    const everything = await find('tool text numbers progress question logs secret hides adds two', 20);
    const names = everything.tools.map((t) => t.name);
    expect(names).not.toContain('secret');
    expect(names).not.toContain('add');
    expect(names).toContain('progress');
  });

  it('calls the real tool through call_tool', async () => {
    const result = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'echo', arguments: { text: 'through tool search' } },
    });
    expect(result.content).toEqual([{ type: 'text', text: 'through tool search' }]);
  });

  it('refuses a hidden or a forbidden tool through call_tool exactly as a direct call', async () => {
    for (const [name, args] of [
      ['secret', {}],
      ['add', { a: 1, b: 2 }],
    ] as const) {
      const direct = await failure(client.callTool({ name, arguments: args }));
      const searched = await failure(
        client.callTool({ name: 'call_tool', arguments: { name, arguments: args } }),
      );
      expect(searched).toBe(direct);
      expect(direct).toContain(name);
    }
  });

  it('refuses bad call_tool arguments with invalid params naming the field', async () => {
    const refused = await failure(client.callTool({ name: 'call_tool', arguments: { arguments: {} } }));
    expect(refused).toContain('arguments.name');
    expect(refused).toContain('-32602');
  });

  it('audits a call_tool under the real tool name', async () => {
    await client.callTool({ name: 'call_tool', arguments: { name: 'echo', arguments: { text: 'audited' } } });
    await client.close();
    await proxy.close();
    const events = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { outcome: string; target: { method?: string; name?: string } });
    const calls = events.filter((e) => e.target.method === 'tools/call');
    const allowed = calls.filter((e) => e.outcome === 'success').map((e) => e.target.name);
    expect(allowed).toContain('echo');
    expect(allowed).toContain('find_tool');
    expect(allowed).not.toContain('call_tool');
    // The refusals of the direct call and of the call_tool alike name the real tool.
    for (const name of ['add', 'secret']) {
      expect(calls.filter((e) => e.target.name === name && e.outcome === 'denied')).toHaveLength(2);
    }
  });
});

const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'tool-search', version: '1' },
};

/** A 2026-07-28 tools/call (sessionless), with the headers that revision asks for. */
async function modernCall(url: string, id: number, name: string, args: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': STATELESS_REVISION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args, _meta: MODERN_ENVELOPE },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return {
    status: response.status,
    body: JSON.parse(json) as { result?: Record<string, unknown>; error?: unknown },
  };
}

describe.each([
  ['a 2026-07-28 server', () => startModernOnlyBackend()],
  ['a 2025 server behind the era bridge', () => startV1StreamableBackend()],
])('tool search for sessionless 2026-07-28 requests: %s', (_name, start) => {
  let backend: HttpBackendServer & { bodies?: Array<Record<string, unknown>> };
  let proxy: RunningProxy;
  beforeAll(async () => {
    backend = await start();
    proxy = await startProxy(
      testConfig({ tool_search: true }),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy?.close();
    await backend?.close();
  });

  it('finds a tool and calls it, each request on its own', async () => {
    const found = await modernCall(`${proxy.url}/mcp`, 1, 'find_tool', { query: 'echo my text', limit: 2 });
    expect(found.status).toBe(200);
    expect(found.body.result).toMatchObject({ structuredContent: { tools: [{ name: 'echo' }] } });
    const called = await modernCall(`${proxy.url}/mcp`, 2, 'call_tool', {
      name: 'echo',
      arguments: { text: 'sessionless' },
    });
    expect(called.status).toBe(200);
    expect(called.body.result).toMatchObject({ content: [{ type: 'text', text: 'sessionless' }] });
    // What a 2026-07-28 server got: the real methods and names, with Mcp-Name headers to match.
    if (backend.bodies) {
      const posts = backend.seen.filter((r) => r.method === 'POST');
      const got = backend.bodies.map((b, i) => [
        b.method,
        (b.params as { name?: string } | undefined)?.name,
        posts[i]?.headers['mcp-name'],
      ]);
      expect(got).toEqual(
        expect.arrayContaining([
          ['tools/list', undefined, undefined],
          ['tools/call', 'echo', 'echo'],
        ]),
      );
    }
  });
});

describe('tool search in front of a stdio server (the multiplexer), with the tool filter and Cedar', () => {
  let moat: MoatUnderTest;
  let client: Client;
  beforeAll(async () => {
    moat = await moatInFrontOf('stdio', {
      tool_search: true,
      tools_filter: ['test_simple_text', 'test_image_content', 'test_audio_content'],
      authz_config: cedarForbidding('test_audio_content'),
    });
    client = new Client({ name: 'tool-search-stdio', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${moat.proxy.url}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await moat?.stop();
  });

  it('lists two tools, finds only what the filter and Cedar leave, and calls through call_tool', async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['find_tool', 'call_tool']);
    const found = await client.callTool({ name: 'find_tool', arguments: { query: 'return a PNG image' } });
    const hits = (found.structuredContent as { tools: Array<{ name: string }>; searched: number }).tools;
    expect(hits[0]?.name).toBe('test_image_content');
    expect((found.structuredContent as { searched: number }).searched).toBe(2);
    const called = await client.callTool({ name: 'call_tool', arguments: { name: 'test_simple_text' } });
    expect(called.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    for (const name of ['test_audio_content', 'test_error_handling']) {
      const direct = await failure(client.callTool({ name, arguments: {} }));
      expect(await failure(client.callTool({ name: 'call_tool', arguments: { name, arguments: {} } }))).toBe(
        direct,
      );
    }
  });
});
