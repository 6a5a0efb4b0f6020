/**
 * Issue 31, finding 1: a list answer a policy must screen (the tool filter, the Cedar list filter)
 * is screened whatever its label and framing, and one that cannot be parsed is refused (502 with
 * the request's id), never passed on unscreened. Each framing below once carried the hidden tool
 * to the client. The backend is test/support/hostile-backend.ts; each case is read twice: by raw
 * fetch (every byte the proxy sends: the hidden tool's name must be in none of them) and by the MCP
 * SDK's client (it must never list the hidden tool; it lists the visible one where it reads the
 * framing).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import type { RunningProxy } from '../../../src/proxy/index.js';
import type { JsonRpcId } from '../../../src/mcp/jsonrpc.js';
import { INIT_BODY, MCP_HEADERS } from '../../support/proxy-harness.js';
import {
  HIDDEN_TOOL,
  proxyInFrontOf,
  startHostileBackend,
  toolsListText,
  VISIBLE_TOOL,
  type HostileBackend,
  type ScriptedAnswer,
} from '../../support/hostile-backend.js';
import { readUntil } from '../../support/streams.js';

const event = (id: JsonRpcId, eol: string) => `event: message${eol}data: ${toolsListText(id)}${eol}${eol}`;

/** How the hostile backend answers tools/list, and what the proxy must make of it. */
const CASES: Array<
  [name: string, answer: (id: JsonRpcId) => ScriptedAnswer, outcome: 'screened' | 'refused']
> = [
  ['SSE with bare-CR line ends', (id) => sse('text/event-stream', event(id, '\r')), 'screened'],
  [
    'SSE opening with a UTF-8 byte order mark',
    (id) => sse('text/event-stream', `\uFEFFdata: ${toolsListText(id)}\n\n`),
    'screened',
  ],
  [
    'SSE whose last event has no closing blank line',
    (id) => sse('text/event-stream', `event: message\ndata: ${toolsListText(id)}`),
    'screened',
  ],
  ['SSE labelled TEXT/EVENT-STREAM', (id) => sse('TEXT/EVENT-STREAM', event(id, '\n')), 'screened'],
  [
    'SSE labelled with parameters',
    (id) => sse('Text/Event-Stream; charset=utf-8', event(id, '\r\n')),
    'screened',
  ],
  ['JSON labelled Application/JSON', (id) => json('Application/JSON', toolsListText(id)), 'screened'],
  ['JSON labelled text/plain', (id) => json('text/plain', toolsListText(id)), 'screened'],
  [
    'JSON labelled application/vnd.x+json',
    (id) => json('application/vnd.x+json', toolsListText(id)),
    'screened',
  ],
  ['JSON without a Content-Type', (id) => json(undefined, toolsListText(id)), 'screened'],
  [
    'JSON opening with a byte order mark',
    (id) => json('application/json', `\uFEFF${toolsListText(id)}`),
    'screened',
  ],
  [
    'JSON whose result has the tools key twice',
    (id) => json('application/json', toolsListText(id).replace('"result":{', '"result":{"tools":[],')),
    'refused',
  ],
  [
    'text that is not JSON, labelled text/plain',
    (_id) => json('text/plain', `tools: ${HIDDEN_TOOL}`),
    'refused',
  ],
  ['SSE framing labelled text/plain', (id) => json('text/plain', event(id, '\n')), 'refused'],
];

function sse(type: string, body: string): ScriptedAnswer {
  return { headers: { 'content-type': type }, chunks: [body] };
}

function json(type: string | undefined, body: string): ScriptedAnswer {
  const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(body)) };
  if (type !== undefined) headers['content-type'] = type;
  return { headers, chunks: [body] };
}

const POLICIES: Array<[string, Partial<RunConfigInput>]> = [
  ['the tool filter', { tools_filter: [VISIBLE_TOOL] }],
  [
    'the Cedar list filter',
    {
      authz_config: {
        version: '1.0',
        type: 'cedarv1',
        cedar: {
          policies: [
            `permit(principal, action == Action::"call_tool", resource == Tool::"${VISIBLE_TOOL}");`,
          ],
        },
      },
    },
  ],
];

describe.each(POLICIES)('hostile list answers, screened by %s', (_policy, overrides) => {
  let backend: HostileBackend;
  let proxy: RunningProxy;

  beforeAll(async () => {
    backend = await startHostileBackend();
    proxy = await proxyInFrontOf(backend, overrides);
  });
  afterAll(async () => {
    await proxy.close();
    await backend.close();
  });

  async function rawSession(): Promise<string> {
    const init = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify(INIT_BODY),
    });
    await init.text();
    return init.headers.get('mcp-session-id') as string;
  }

  async function sdkTools(): Promise<string[] | Error> {
    const client = new Client({ name: 'hostile-answers-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
    try {
      return await client.listTools({}, { timeout: 5000 }).then(
        (r) => r.tools.map((t) => t.name),
        (err: unknown) => err as Error,
      );
    } finally {
      await client.close();
    }
  }

  it.each(CASES)('%s', async (_name, answer, outcome) => {
    backend.script((method, id) => (method === 'tools/list' ? answer(id) : json('application/json', '{}')));
    const session = await rawSession();
    const res = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'tools/list', params: {} }),
    });
    const text = await res.text();
    expect(text).not.toContain(HIDDEN_TOOL);
    if (outcome === 'refused') {
      expect(res.status).toBe(502);
      expect(JSON.parse(text)).toMatchObject({ id: 41, error: { code: -32000 } });
    } else {
      expect(res.status).toBe(200);
      expect(text).toContain(VISIBLE_TOOL);
    }
    const tools = await sdkTools();
    if (Array.isArray(tools)) expect(tools).toEqual([VISIBLE_TOOL]);
    else expect(outcome === 'refused' || /content type/i.test(tools.message)).toBe(true);
  });

  it('a list pushed on the GET stream with bare-CR framing', async () => {
    const push = (id: JsonRpcId) => `${event(id, '\r')}: keep-alive\n\n`;
    backend.script((method, id) =>
      method === 'tools/list'
        ? { status: 202, headers: {}, chunks: [], onGet: push(id) }
        : json('application/json', '{}'),
    );
    const session = await rawSession();
    // The proxy's head goes out with the stream's first bytes: the push.
    const opened = fetch(`${proxy.url}/mcp`, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': session },
    });
    await backend.getStreamOpen();
    const posted = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'tools/list', params: {} }),
    });
    expect(posted.status).toBe(202);
    const reader = ((await opened).body as ReadableStream<Uint8Array>).getReader();
    const { text } = await readUntil(reader, (t) => t.includes('keep-alive'));
    await reader.cancel();
    expect(text).toContain(VISIBLE_TOOL);
    expect(text).not.toContain(HIDDEN_TOOL);

    const tools = await sdkTools();
    expect(tools).toEqual([VISIBLE_TOOL]);
  });
});
