/**
 * Property-based fuzz targets (fast-check) for the parts that read hostile bytes: the JSON-RPC
 * parser, SSE framing, and the proxy's header filters. Each target is a property: it holds for
 * every input or the fuzzer reports a (shrunk) counterexample. `npm run fuzz` runs them for at
 * least a million executions; test/fuzz/fuzz.test.ts runs a few seconds of them in the suite.
 */
import fc from 'fast-check';
import { InvalidMessage, parseJsonRpc, tryParseJsonRpc, type JsonRpcMessage } from '../src/mcp/jsonrpc.js';
import { SseParser, withData, type SseEvent } from '../src/mcp/sse.js';
import { clientHeaders, upstreamHeaders } from '../src/proxy/http/upstream-client.js';
import { chunked, hostileServer } from './fuzz-hostile-server.js';

export interface FuzzTarget {
  name: string;
  property: () => fc.IRawProperty<unknown[]>;
  /** Stops what the target started (servers, proxies) once its runs are over. */
  close?: () => Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC

const small = { maxDepth: 2, maxKeys: 4 };
const id = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.constant(null),
  fc.boolean(),
  fc.object(small),
);
/** Values shaped like JSON-RPC messages, with every field sometimes of the wrong type. */
const messageLike = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.string(), fc.integer()),
    id,
    method: fc.oneof(fc.constantFrom('tools/call', 'initialize', 'ping', ''), fc.string(), fc.integer()),
    params: fc.oneof(
      fc.object(small),
      fc.array(fc.anything(small), { maxLength: 4 }),
      fc.string(),
      fc.constant(null),
    ),
    result: fc.anything(small),
    error: fc.oneof(fc.record({ code: fc.integer(), message: fc.string() }), fc.anything(small)),
  },
  { requiredKeys: [] },
);
const jsonText = fc.oneof(
  fc.json({ maxDepth: 3 }),
  messageLike.map((m) => JSON.stringify(m)),
  fc.array(messageLike, { maxLength: 3 }).map((m) => JSON.stringify(m)),
);
/** JSON text with a few bytes changed, cut short or extended: near-valid input finds the edges. */
const mutatedJson = fc
  .tuple(jsonText, fc.nat(), fc.constantFrom('cut', 'flip', 'append', 'bom'), fc.string({ maxLength: 4 }))
  .map(([text, at, how, extra]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    if (how === 'cut') return text.slice(0, i);
    if (how === 'flip') return text.slice(0, i) + extra + text.slice(i + 1);
    if (how === 'bom') return `\uFEFF${text}`;
    return text + extra;
  });
const anyBody = fc.oneof(
  jsonText,
  mutatedJson,
  fc.string(),
  fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)),
);

/** A message the parser accepted keeps the shape every policy relies on. */
function wellFormed(m: JsonRpcMessage): boolean {
  if (m.jsonrpc !== '2.0') return false;
  if ('method' in m) {
    const params = m.params as unknown;
    return (
      typeof m.method === 'string' &&
      m.method !== '' &&
      (params === undefined || (typeof params === 'object' && params !== null && !Array.isArray(params))) &&
      (!('id' in m) || typeof m.id === 'string' || typeof m.id === 'number')
    );
  }
  return 'result' in m !== 'error' in m;
}

const jsonRpcParse: FuzzTarget = {
  name: 'jsonrpc: parseJsonRpc accepts only well-formed messages and fails only with InvalidMessage',
  property: () =>
    fc.property(anyBody, (body) => {
      try {
        return wellFormed(parseJsonRpc(body));
      } catch (err) {
        if (!(err instanceof InvalidMessage)) throw err;
        return typeof err.error.code === 'number' && err.error.message.length > 0;
      }
    }),
};

const jsonRpcTryParse: FuzzTarget = {
  name: 'jsonrpc: tryParseJsonRpc never throws',
  property: () =>
    fc.property(fc.oneof(jsonText, mutatedJson, fc.string()), (text) => {
      const m = tryParseJsonRpc(text);
      return m === undefined || wellFormed(m);
    }),
};

// ---------------------------------------------------------------------------------------------
// SSE framing

const sseLine = fc.oneof(
  fc.string({ maxLength: 40 }).map((v) => `data: ${v.replace(/[\r\n]/g, '')}`),
  fc.constantFrom('event: message', 'id: 7', 'retry: 100', ': keep-alive', 'data:', 'data', ''),
  fc.string({ maxLength: 20 }).map((v) => v.replace(/[\r\n]/g, '')),
);
const sseStream = fc
  .tuple(fc.array(fc.array(sseLine, { maxLength: 5 }), { maxLength: 8 }), fc.constantFrom('\n', '\r\n', '\r'))
  .map(([events, eol]) => events.map((lines) => lines.join(eol) + eol + eol).join(''));
/** Split points in the stream's bytes, so chunks may end inside a line or a UTF-8 sequence. */
const cuts = fc.array(fc.nat(), { maxLength: 10 });

const sseLossless: FuzzTarget = {
  name: 'sse: framing is lossless and the same however the bytes are chunked',
  property: () =>
    fc.property(fc.oneof(sseStream, fc.string()), cuts, (text, at) => {
      const bytes = Buffer.from(text, 'utf8');
      const whole = new SseParser();
      const once = whole.push(bytes);
      const onceRest = whole.flush();
      const parts = new SseParser();
      const pieces = chunked(bytes, at).flatMap((c) => parts.push(c));
      const piecesRest = parts.flush();
      const joined = once.map((e) => e.raw).join('') + onceRest.raw;
      // One byte order mark opening the stream is not part of it (the SSE standard's decoding).
      // A CR that ends the bytes may be half a CRLF: a split there may end an event later.
      const same = JSON.stringify([...pieces, piecesRest]) === JSON.stringify([...once, onceRest]);
      return joined === text.replace(/^\uFEFF/, '') && (same || sameData(pieces, piecesRest, once, onceRest));
    }),
};

/** The same data and event names, however the raw text was cut into events. */
function sameData(a: SseEvent[], aRest: SseEvent, b: SseEvent[], bRest: SseEvent): boolean {
  const fields = (events: SseEvent[]) =>
    JSON.stringify(events.filter((e) => e.data !== undefined).map((e) => [e.event, e.data]));
  return fields([...a, aRest]) === fields([...b, bRest]);
}

const sseRewrite: FuzzTarget = {
  name: 'sse: withData replaces the data and keeps one event with the other fields',
  property: () =>
    fc.property(sseStream, fc.json({ maxDepth: 2 }), (text, data) => {
      for (const event of new SseParser().push(text)) {
        const rewritten = new SseParser().push(withData(event, data));
        if (rewritten.length !== 1 || rewritten[0]?.data !== data || rewritten[0].event !== event.event)
          return false;
      }
      return true;
    }),
};

// ---------------------------------------------------------------------------------------------
// Header filters

const headerName = fc.oneof(
  fc.constantFrom(
    'host',
    'connection',
    'keep-alive',
    'transfer-encoding',
    'te',
    'upgrade',
    'authorization',
    'cookie',
    'proxy-authorization',
    'mcp-session-id',
    'set-cookie',
    'www-authenticate',
    'content-length',
    'content-encoding',
    'x-forwarded-for',
    'forwarded',
    'accept',
    'content-type',
    'x-custom',
  ),
  fc.stringMatching(/^[a-z0-9-]{1,20}$/),
);
const headerValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
);
const headers = fc.dictionary(headerName, headerValue, { maxKeys: 12 });

const NEVER_UPSTREAM = [
  'host',
  'connection',
  'transfer-encoding',
  'authorization',
  'cookie',
  'proxy-authorization',
  'mcp-session-id',
  'forwarded',
];
const NEVER_TO_CLIENT = [
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'set-cookie',
  'www-authenticate',
];

const upstreamFilter: FuzzTarget = {
  name: "headers: the client's credentials and hop-by-hop headers never go upstream",
  property: () =>
    fc.property(headers, fc.boolean(), (incoming, remote) => {
      const out = upstreamHeaders(incoming, {
        remote,
        clientAddress: '203.0.113.9',
        externalBaseUrl: 'https://proxy.example/team',
      });
      if (NEVER_UPSTREAM.some((name) => name in out)) return false;
      if (out['accept-encoding'] !== 'identity') return false;
      // Spoofed X-Forwarded-* from the client never survive: the proxy sets its own or none.
      return remote ? !('x-forwarded-for' in out) : out['x-forwarded-for'] === '203.0.113.9';
    }),
};

const clientFilter: FuzzTarget = {
  name: "headers: the backend's session id, cookies and hop-by-hop headers never reach the client",
  property: () =>
    fc.property(headers, fc.boolean(), (upstream, rewritten) => {
      const out = clientHeaders(upstream, rewritten);
      if (NEVER_TO_CLIENT.some((name) => name in out)) return false;
      return !rewritten || (!('content-length' in out) && !('content-encoding' in out));
    }),
};

export const FUZZ_TARGETS: readonly FuzzTarget[] = [
  jsonRpcParse,
  jsonRpcTryParse,
  sseLossless,
  sseRewrite,
  upstreamFilter,
  clientFilter,
  hostileServer,
];
