/**
 * The era bridge in front of a 2025-era server built on the v2 MCP SDK, which sends a call's
 * sampling, elicitation and roots requests on the session's GET stream rather than on the call's
 * own stream. A real v2 client pinned to 2026-07-28 gets each as an input round and its answer
 * reaches the server; a listen on the same backend session shares that GET stream (a server
 * allows one), so list changes keep arriving while calls ask for input.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { STATELESS_REVISION } from '../../../src/mcp/revisions.js';
import { startV2Member, type MemberServer } from '../../support/aggregate-members.js';
import { memoryLogger, streamReader, testConfig } from '../../support/proxy-harness.js';

let server: MemberServer;
let proxy: RunningProxy;
let client: Client;
const asked: string[] = [];

beforeAll(async () => {
  server = await startV2Member('v2');
  proxy = await startProxy(
    testConfig(),
    { kind: 'http', url: server.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
  client = new Client(
    { name: 'bridged', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: STATELESS_REVISION } },
      capabilities: { sampling: {}, elicitation: {}, roots: {} },
    },
  );
  client.setRequestHandler('sampling/createMessage', () => {
    asked.push('sampling');
    return { role: 'assistant' as const, content: { type: 'text' as const, text: 'sampled' }, model: 'test' };
  });
  client.setRequestHandler('elicitation/create', (request) => {
    asked.push(`elicitation:${String(request.params.message)}`);
    return { action: 'accept' as const, content: { answer: 'yes' } };
  });
  client.setRequestHandler('roots/list', () => {
    asked.push('roots');
    return { roots: [{ uri: 'file:///work', name: 'work' }] };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
});

afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await server?.close();
});

const textOf = (result: { content?: unknown }) =>
  (result.content as Array<{ text?: string }>).map((c) => c.text).join('');

describe('era bridge: server requests on the session GET stream (v2 SDK servers)', () => {
  it('sampling, elicitation and roots of a call each become an input round the client answers', async () => {
    asked.length = 0;
    expect(textOf(await client.callTool({ name: 'ask', arguments: { question: 'q?' } }))).toBe(
      'v2 heard sampled',
    );
    expect(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'ok?' } }))).toBe(
      'v2 got accept:yes',
    );
    expect(textOf(await client.callTool({ name: 'roots', arguments: {} }))).toBe('v2 sees file:///work');
    expect(asked).toEqual(['sampling', 'elicitation:ok?', 'roots']);
  });

  it('a listen on the same backend session shares the GET stream: list changes still arrive between input rounds', async () => {
    const controller = new AbortController();
    const listen = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': STATELESS_REVISION,
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'sub-1',
        method: 'subscriptions/listen',
        params: {
          notifications: { toolsListChanged: true },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    try {
      const stream = streamReader(listen);
      await stream.until((m) => m.some((x) => x.method === 'notifications/subscriptions/acknowledged'));
      expect(textOf(await client.callTool({ name: 'ask', arguments: { question: 'again?' } }))).toBe(
        'v2 heard sampled',
      );
      server.addTool!('late');
      const seen = await stream.until((m) => m.some((x) => x.method === 'notifications/tools/list_changed'));
      expect(seen.find((x) => x.method === 'notifications/tools/list_changed')).toMatchObject({
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } },
      });
      expect(textOf(await client.callTool({ name: 'ask', arguments: { question: 'once more?' } }))).toBe(
        'v2 heard sampled',
      );
    } finally {
      controller.abort();
    }
  });
});
