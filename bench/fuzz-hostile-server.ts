/**
 * The response side under fuzzing: a hostile MCP server (test/support/hostile-backend.ts) answers
 * `tools/list` and `tools/call` with generated answers — any label and casing, byte order marks,
 * LF/CRLF/CR line ends, chunks split anywhere, unterminated events, JSON lines, pretty-printed
 * JSON, duplicate keys, escaped keys and names, ids that match no request — through a real proxy
 * with the tool filter and one with the Cedar list filter. Invariant: no byte the client receives
 * carries the hidden tool's name, read literally or with JSON escapes decoded, whatever the status.
 * In process and over loopback HTTP: every run is a real exchange through the forwarder.
 */
import fc from 'fast-check';
import type { FuzzTarget } from './fuzz-targets.js';
import type { RunningProxy } from '../src/proxy/index.js';
import type { JsonRpcId } from '../src/mcp/jsonrpc.js';
import {
  HIDDEN_TOOL,
  proxyInFrontOf,
  startHostileBackend,
  VISIBLE_TOOL,
  type HostileBackend,
  type ScriptedAnswer,
} from '../test/support/hostile-backend.js';
import { INIT_BODY, MCP_HEADERS } from '../test/support/proxy-harness.js';

const LABELS = [
  'text/event-stream',
  'TEXT/EVENT-STREAM',
  'text/event-stream; charset=utf-8',
  ' Text/Event-Stream ;x=1',
  'application/json',
  'Application/JSON',
  'application/json; charset=UTF-8',
  'application/vnd.x+json',
  'text/plain',
  'text/html',
  'application/octet-stream',
  undefined,
];

const VARIANTS = [
  'plain',
  'string-id',
  'other-id',
  'escaped-key',
  'escaped-name',
  'duplicate-first',
  'duplicate-last',
  'duplicate-case',
  'pretty',
] as const;

const answerSpec = fc.record({
  method: fc.constantFrom('tools/list', 'tools/call'),
  id: fc.integer({ min: 1, max: 1_000_000 }),
  variant: fc.constantFrom(...VARIANTS),
  framing: fc.constantFrom('sse', 'json'),
  label: fc.constantFrom(...LABELS),
  bom: fc.boolean(),
  eol: fc.constantFrom('\n', '\r\n', '\r'),
  before: fc.nat({ max: 2 }),
  eventField: fc.boolean(),
  terminated: fc.boolean(),
  comment: fc.boolean(),
  withLength: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 6 }),
  policy: fc.constantFrom(0, 1),
});
type AnswerSpec = typeof answerSpec extends fc.Arbitrary<infer T> ? T : never;

function tool(name: string) {
  return { name, description: `the ${name}`, inputSchema: { type: 'object' } };
}

/** The list answer's text, by variant. */
function listText(spec: AnswerSpec): string {
  const id: JsonRpcId =
    spec.variant === 'string-id' ? String(spec.id) : spec.variant === 'other-id' ? spec.id + 7 : spec.id;
  const tools = [tool(VISIBLE_TOOL), tool(HIDDEN_TOOL)];
  const text = JSON.stringify({ jsonrpc: '2.0', id, result: { tools } });
  const toolsJson = JSON.stringify(tools);
  switch (spec.variant) {
    case 'escaped-key':
      return text.replace('"tools"', '"\\u0074ools"');
    case 'escaped-name':
      return text.replaceAll(HIDDEN_TOOL, 'secret\\u005ftool');
    case 'duplicate-first':
      return text.replace('"result":{', '"result":{"tools":[],');
    case 'duplicate-last':
      return text.replace(`"tools":${toolsJson}`, `"tools":${toolsJson},"tools":[]`);
    case 'duplicate-case':
      return text.replace('"result":{', '"result":{"Tools":[],');
    case 'pretty':
      return JSON.stringify({ jsonrpc: '2.0', id, result: { tools } }, null, 2);
    default:
      return text;
  }
}

const progress = (n: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 1, progress: n },
  });

/** The generated answer's bytes and headers. */
function scripted(spec: AnswerSpec): ScriptedAnswer {
  const messages = [...Array.from({ length: spec.before }, (_, i) => progress(i)), listText(spec)];
  let body: string;
  if (spec.framing === 'sse') {
    const events = messages.map((m, i) => {
      const lines = [
        ...(spec.comment ? [': hostile'] : []),
        ...(spec.eventField ? ['event: message'] : []),
        `id: ${i}`,
        ...m.split('\n').map((line) => `data: ${line}`),
      ];
      return lines.join(spec.eol) + spec.eol;
    });
    body = events.join(spec.eol) + (spec.terminated ? spec.eol : '');
  } else {
    body = messages.join(spec.eol) + (spec.terminated ? spec.eol : '');
  }
  const bytes = Buffer.from((spec.bom ? '\uFEFF' : '') + body);
  const headers: Record<string, string> = {};
  if (spec.label !== undefined) headers['content-type'] = spec.label;
  if (spec.withLength) headers['content-length'] = String(bytes.length);
  const chunks = chunked(bytes, spec.cuts);
  return { headers, chunks: chunks.filter((c) => c.length > 0) };
}

/** The bytes cut at the given points (taken modulo the length), so chunks may end anywhere. */
export function chunked(bytes: Buffer, at: number[]): Buffer[] {
  const points = [...new Set(at.map((n) => (bytes.length === 0 ? 0 : n % bytes.length)))].sort(
    (a, b) => a - b,
  );
  const out: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}

/** The text with every JSON `\uXXXX` escape decoded: a name hidden behind escapes shows. */
function unescaped(text: string): string {
  return text.replace(/\\u([0-9a-fA-F]{4})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

interface Rig {
  backend: HostileBackend;
  proxies: Array<{ proxy: RunningProxy; session: string }>;
}

let rig: Promise<Rig> | undefined;

const CEDAR = {
  version: '1.0',
  type: 'cedarv1',
  cedar: {
    policies: [`permit(principal, action == Action::"call_tool", resource == Tool::"${VISIBLE_TOOL}");`],
  },
};

async function startRig(): Promise<Rig> {
  const backend = await startHostileBackend();
  const proxies = [];
  for (const config of [{ tools_filter: [VISIBLE_TOOL] }, { authz_config: CEDAR }]) {
    const proxy = await proxyInFrontOf(backend, { ...config, upstream_timeout: '5s' });
    const init = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify(INIT_BODY),
    });
    await init.text();
    proxies.push({ proxy, session: init.headers.get('mcp-session-id') as string });
  }
  return { backend, proxies };
}

/** Every byte of the answer the client gets, even when the proxy cuts the response off. */
async function received(res: Response): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // Cut off: what arrived before is what the client saw.
  }
  return text + decoder.decode();
}

export const hostileServer: FuzzTarget = {
  name: 'hostile server: no hidden tool reaches the client, whatever the label and framing of an answer',
  property: () =>
    fc.asyncProperty(answerSpec, async (spec) => {
      rig ??= startRig();
      const { backend, proxies } = await rig;
      const { proxy, session } = proxies[spec.policy] as Rig['proxies'][number];
      backend.script((method, id) =>
        method === spec.method && id === spec.id
          ? scripted(spec)
          : {
              headers: { 'content-type': 'application/json' },
              chunks: [JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'no' } })],
            },
      );
      const params = spec.method === 'tools/call' ? { name: VISIBLE_TOOL, arguments: {} } : {};
      const res = await fetch(`${proxy.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'mcp-session-id': session },
        body: JSON.stringify({ jsonrpc: '2.0', id: spec.id, method: spec.method, params }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await received(res);
      return !unescaped(text).includes(HIDDEN_TOOL);
    }),
  close: async () => {
    if (!rig) return;
    const { backend, proxies } = await rig;
    rig = undefined;
    await Promise.all(proxies.map(({ proxy }) => proxy.close()));
    await backend.close();
  },
};
