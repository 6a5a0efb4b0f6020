/**
 * JSON lines through the HTTP forwarder: a backend that answers with `Content-Type:
 * application/json`, chunked, one JSON-RPC message per line, the response left open (a streaming
 * tool, a 2026-07-28 `subscriptions/listen`). Each message reaches the client as it is sent, as
 * the backend framed it, with or without policies; a policy that needs the content screens each
 * message; only a broken answer is a 502 with the request's id. The backend is
 * test/support/hostile-backend.ts; the client is raw fetch (it must see the bytes and their
 * timing) and the MCP SDK's client where one reads the framing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import type { RunningProxy } from '../../../src/proxy/index.js';
import { INIT_BODY, MCP_HEADERS } from '../../support/proxy-harness.js';
import {
  HIDDEN_TOOL,
  proxyInFrontOf,
  startHostileBackend,
  toolsListText,
  VISIBLE_TOOL,
  WAIT,
  type HostileBackend,
} from '../../support/hostile-backend.js';
import { readUntil } from '../../support/streams.js';
import type { JsonRpcId } from '../../../src/mcp/jsonrpc.js';

const JSON_LINES = { 'content-type': 'application/json' };
const progress = (n: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 't', progress: n },
  });
const callResult = (id: JsonRpcId, text: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

describe.each([
  ['without policies', {}],
  ['with a tool filter', { tools_filter: [VISIBLE_TOOL] }],
])('JSON lines from the backend, %s', (name, overrides: Partial<RunConfigInput>) => {
  const filtered = name !== 'without policies';
  let backend: HostileBackend;
  let proxy: RunningProxy;
  let session: string;

  beforeAll(async () => {
    backend = await startHostileBackend();
    proxy = await proxyInFrontOf(backend, overrides);
    const init = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify(INIT_BODY),
    });
    await init.text();
    session = init.headers.get('mcp-session-id') as string;
  });
  afterAll(async () => {
    backend.release();
    await proxy.close();
    await backend.close();
  });

  const send = (id: number, method: string, params: Record<string, unknown> = {}) =>
    fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });

  it('streams each line as the backend sends it, the response left open until the backend ends it', async () => {
    backend.script((_method, id) => ({
      headers: JSON_LINES,
      chunks: [`${progress(1)}\n`, WAIT, `${progress(2)}\n${callResult(id, 'done')}\n`],
      open: true,
    }));
    const res = await send(2, 'tools/call', { name: VISIBLE_TOOL, arguments: {} });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    // The first line arrives while the backend holds back the rest: nothing waits for the end.
    const first = await readUntil(reader, (text) => text.endsWith('\n'));
    expect(first).toEqual({ text: `${progress(1)}\n`, done: false });
    backend.release();
    // Every line is in while the backend still holds the response open.
    const all = `${progress(1)}\n${progress(2)}\n${callResult(2, 'done')}\n`;
    const rest = await readUntil(reader, (text) => text === all, first.text);
    expect(rest).toEqual({ text: all, done: false });
    backend.release();
    expect(await readUntil(reader, () => false, rest.text)).toEqual({ text: all, done: true });
  });

  it(`passes a tools/list answered in JSON lines${filtered ? ', each line screened' : ''}`, async () => {
    backend.script((_method, id) => ({
      headers: JSON_LINES,
      chunks: [`${progress(1)}\r\n`, WAIT, `${toolsListText(id)}\n`],
    }));
    const res = await send(3, 'tools/list');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await readUntil(reader, (text) => text.endsWith('\n'));
    expect(first.text).toBe(`${progress(1)}\r\n`);
    backend.release();
    const { text } = await readUntil(reader, () => false, first.text);
    const lines = text
      .trim()
      .split(/\r?\n/)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    const names = (lines[1] as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (t) => t.name,
    );
    expect(names).toEqual(filtered ? [VISIBLE_TOOL] : [VISIBLE_TOOL, HIDDEN_TOOL]);
    if (filtered) expect(text).not.toContain(HIDDEN_TOOL);
  });

  it('answers a chunked answer whose first message is broken with a 502 for the request', async () => {
    backend.script(() => ({ headers: JSON_LINES, chunks: ['{"jsonrpc":"2.0",', 'oops}\n'] }));
    const res = await send(4, 'tools/call', { name: VISIBLE_TOOL, arguments: {} });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ id: 4, error: { message: /broken answer/ } });
  });

  it('cuts the response off at a broken later line, never passing it on', async () => {
    backend.script((_method, id) => ({
      headers: JSON_LINES,
      chunks: [`${progress(1)}\n`, WAIT, `not json\n${callResult(id, 'late')}\n`],
    }));
    const res = await send(5, 'tools/call', { name: VISIBLE_TOOL, arguments: {} });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await readUntil(reader, (text) => text.endsWith('\n'));
    backend.release();
    await expect(readUntil(reader, () => false, first.text)).rejects.toThrow();
  });

  it('serves the MCP SDK client a chunked single-message answer', async () => {
    backend.script((method, id) =>
      method === 'tools/list'
        ? { headers: JSON_LINES, chunks: [toolsListText(id).slice(0, 20), toolsListText(id).slice(20), '\n'] }
        : { headers: JSON_LINES, chunks: [callResult(id, 'sdk')] },
    );
    const client = new Client({ name: 'json-lines-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(filtered ? [VISIBLE_TOOL] : [VISIBLE_TOOL, HIDDEN_TOOL]);
      const result = await client.callTool({ name: VISIBLE_TOOL, arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'sdk' }]);
    } finally {
      await client.close();
    }
  });
});
