/**
 * Relays an upstream response body to the client: raw bytes when nothing needs to look inside,
 * otherwise message by message (JSON or SSE-framed) through the server-side policies.
 */
import type { ServerResponse } from 'node:http';
import type { SseWriter } from '../../sse.js';
import { endsWithBlankLine, SseParser, withData, type SseEvent } from '../../sse.js';
import { clientHeaders, wholeBody, type UpstreamResponse } from './upstream-client.js';
import type { BodyFlow, UpstreamExchange } from './undici-pool.js';
import { UpstreamTimeout } from './deadline.js';
import { reject, type ProxyRejection } from '../../../pipeline/errors.js';
import { errorMessage } from '../../../../util/errors.js';
import {
  isResponse,
  jsonShapeProblem,
  RPC,
  toJsonRpcMessage,
  tryParseJsonRpc,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../../mcp/jsonrpc.js';
import { runServerPolicies, type MessageContext, type MessagePolicy } from '../../../../mcp/policy.js';

/** A streamed answer's body, read chunk by chunk as it arrives. */
type Body = Pick<UpstreamExchange, 'consume'>;

/** Finds the request a response answers; undefined leaves the response untouched. */
export type RequestLookup = (id: JsonRpcId) => JsonRpcRequest | undefined;

export interface ServerSide {
  policies: readonly MessagePolicy[];
  /** Screens a message's raw text before it is parsed; absent: every response is parsed. */
  needed?: (text: string | Buffer) => boolean;
  ctx: MessageContext;
  lookup: RequestLookup;
}

/** What replaces an answer the response policies could not read (fail closed). */
const UNREADABLE_ANSWER = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: {
    code: -32603,
    message: "The MCP server's answer could not be read, so the proxy's policies could not check it",
  },
});

/** The list method a result answers, by its shape. */
const LIST_RESULTS: Array<[field: string, method: string]> = [
  ['tools', 'tools/list'],
  ['prompts', 'prompts/list'],
  ['resources', 'resources/list'],
  ['resourceTemplates', 'resources/templates/list'],
];

/**
 * The request a response most likely answers when this process never saw it (a legacy SSE
 * stream held here for a message POSTed to another replica, or a resumed stream): list results
 * are recognised by shape, so list filtering never fails open.
 */
export function inferListRequest(response: JsonRpcResponse): JsonRpcRequest | undefined {
  const result = response.result;
  if (typeof result !== 'object' || result === null || response.id === null) return undefined;
  for (const [field, method] of LIST_RESULTS) {
    if (Array.isArray((result as Record<string, unknown>)[field]))
      return { jsonrpc: '2.0', id: response.id, method };
  }
  return undefined;
}

/**
 * Runs the server-side policies over one JSON-RPC text; returns the text to send. Text the
 * policies cannot read (compressed, malformed) is never passed on unchecked: it becomes an error.
 */
export async function transformMessageText(text: string, side: ServerSide): Promise<string> {
  if (side.needed && !side.needed(text)) return text;
  const message = tryParseJsonRpc(text);
  if (!message) return text.trim() === '' ? text : UNREADABLE_ANSWER;
  return transformMessage(message, text, side);
}

async function transformMessage(message: JsonRpcMessage, text: string, side: ServerSide): Promise<string> {
  if (!isResponse(message) || message.id === null) return text;
  const request = side.lookup(message.id) ?? inferListRequest(message);
  if (!request) return text;
  const out = await runServerPolicies(side.policies, message, request, side.ctx);
  return out === message ? text : JSON.stringify(out);
}

/** An answer that must not reach the client: a clean 502 for the request instead. */
function brokenAnswer(why: string, id: JsonRpcId | null): ProxyRejection {
  return reject(502, RPC.serverError, `The MCP backend sent a broken answer: ${why}`, { id });
}

function isJsonType(headers: UpstreamResponse['headers']): boolean {
  return String(headers['content-type']).startsWith('application/json');
}

/**
 * A non-stream answer, read whole and checked before any byte of it reaches the client, then
 * passed through the server-side policies (`side`). A truncated body, one over the size limit,
 * invalid JSON, nesting deeper than MAX_JSON_DEPTH (jsonShapeProblem), or a 2xx JSON answer that is not a JSON-RPC
 * message all become a 502 with a JSON-RPC error for request `id`.
 */
export async function answerBody(
  upstream: UpstreamResponse,
  id: JsonRpcId | null,
  side: ServerSide | undefined,
): Promise<Buffer> {
  let body: Buffer;
  try {
    body = await wholeBody(upstream);
  } catch (err) {
    if (err instanceof UpstreamTimeout) throw err;
    throw brokenAnswer(errorMessage(err), id);
  }
  if (body.length === 0 || !isJsonType(upstream.headers)) return body;
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw brokenAnswer('the body is not valid JSON', id);
  }
  const problem = jsonShapeProblem(text, false);
  if (problem !== undefined) throw brokenAnswer(problem, id);
  if (upstream.statusCode >= 300) return body;
  let message: JsonRpcMessage;
  try {
    message = toJsonRpcMessage(value);
  } catch (err) {
    throw brokenAnswer(`not a JSON-RPC message (${errorMessage(err)})`, id);
  }
  if (!side) return body;
  const out = await transformMessage(message, text, side);
  return out === text ? body : Buffer.from(out);
}

/** Sends a non-stream answer once it is read whole and checked (answerBody), with its own length. */
export async function relayAnswer(
  upstream: UpstreamResponse,
  res: ServerResponse,
  id: JsonRpcId | null,
  side: ServerSide | undefined,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  const body = await answerBody(upstream, id, side);
  res.writeHead(upstream.statusCode, {
    ...clientHeaders(upstream.headers, true),
    ...extraHeaders,
    'content-length': body.length,
  });
  res.end(body);
}

export type EventRewriter = (event: SseEvent) => Promise<string> | string;

/**
 * Feeds a body's chunks to `write` as they arrive, pausing the body while a write waits (a slow
 * client, a policy). A sink on the exchange rather than a stream: no Readable, listeners or ticks
 * per streamed answer, and `ended` runs in the same tick as the last write when the body's last
 * chunk and its end arrive together (so the client gets both in one socket write). Once
 * `stopped()` it aborts the exchange and resolves; a failed write aborts it and rejects.
 */
function pump(
  body: Body,
  write: (chunk: Buffer) => Promise<void> | undefined,
  stopped: () => boolean,
  ended: () => void,
): Promise<void> {
  return new Promise((resolve, rejectPump) => {
    let settled = false;
    const finish = (err?: Error): void => {
      if (settled) return;
      settled = true;
      if (err) rejectPump(err);
      else resolve();
    };
    const fail = (flow: BodyFlow, err: unknown): void => {
      const error = err instanceof Error ? err : new Error(String(err));
      finish(error);
      flow.abort(error);
    };
    const stop = (flow: BodyFlow): void => {
      finish();
      flow.abort(new Error('the client stopped reading the stream'));
    };
    body.consume({
      data: (chunk, flow) => {
        if (settled) return;
        if (stopped()) return stop(flow);
        let waiting: Promise<void> | undefined;
        try {
          waiting = write(chunk);
        } catch (err) {
          // A rewrite that fails at once fails the relay as one that fails later does.
          return fail(flow, err);
        }
        if (!waiting) return;
        flow.pause();
        waiting.then(
          () => (stopped() ? stop(flow) : flow.resume()),
          (err: unknown) => fail(flow, err),
        );
      },
      end: () => {
        if (settled) return;
        ended();
        finish();
      },
      error: (err) => finish(err),
    });
  });
}

/**
 * An SSE body: raw with keep-alives, or event by event through `rewrite`. `passesWhole` screens a
 * chunk of whole events by its raw bytes: one no rewrite can need (the usual answer to a
 * `tools/call`) is written as it came, without being split into events. A body that ends ends
 * the client's response in the same tick; one that fails leaves it open for the caller.
 */
export async function relaySse(
  body: Body,
  writer: SseWriter,
  rewrite: EventRewriter | undefined,
  passesWhole?: (chunk: Buffer) => boolean,
): Promise<void> {
  const stopped = () => writer.closed;
  if (!rewrite)
    return pump(
      body,
      (chunk) => writer.write(chunk),
      stopped,
      () => writer.end(),
    );
  const parser = new SseParser();
  await pump(
    body,
    (chunk) =>
      passesWhole && parser.atBoundary && endsWithBlankLine(chunk) && passesWhole(chunk)
        ? writer.write(chunk)
        : writeEvents(parser.push(chunk), 0, writer, rewrite),
    stopped,
    () => {
      // An unterminated rest is passed through unchanged.
      void writer.write(parser.flush());
      writer.end();
    },
  );
}

/**
 * Writes the events in order; returns a promise only once a rewrite or a write has to wait, so
 * an answer no policy needs costs no promise hop (and no pause of the body).
 */
function writeEvents(
  events: SseEvent[],
  from: number,
  writer: SseWriter,
  rewrite: EventRewriter,
): Promise<void> | undefined {
  for (let i = from; i < events.length; i++) {
    const text = rewrite(events[i] as SseEvent);
    const waiting = typeof text === 'string' ? writer.write(text) : text.then((t) => writer.write(t));
    if (waiting) return waiting.then(() => writeEvents(events, i + 1, writer, rewrite));
  }
  return undefined;
}

/** The rewriter that runs server policies on SSE-framed responses. */
export function policyRewriter(side: ServerSide): EventRewriter {
  return (event) => {
    // Events no policy needs (screened by their raw text) pass as they came, synchronously.
    if (event.data === undefined || (side.needed && !side.needed(event.data))) return event.raw;
    const data = event.data;
    return transformMessageText(data, side).then((text) =>
      text === data ? event.raw : withData(event, text),
    );
  };
}
