/**
 * Relays an upstream response body to the client: raw bytes when nothing needs to look inside,
 * otherwise message by message (JSON or SSE-framed) through the server-side policies.
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { isResponse, tryParseJsonRpc } from '../../pipeline/jsonrpc.js';
import { runServerPolicies } from '../../pipeline/run.js';
import type {
  JsonRpcId,
  JsonRpcRequest,
  JsonRpcResponse,
  MessageContext,
  MessagePolicy,
} from '../../types.js';
import type { SseWriter } from './sse.js';
import { drained, SseParser, withData, type SseEvent } from './sse.js';
import { wholeBody, type UpstreamResponse } from './upstream.js';

type Body = Readable;

/** Finds the request a response answers; undefined leaves the response untouched. */
export type RequestLookup = (id: JsonRpcId) => JsonRpcRequest | undefined;

export interface ServerSide {
  policies: readonly MessagePolicy[];
  ctx: MessageContext;
  lookup: RequestLookup;
}

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

/** Runs the server-side policies over one JSON-RPC text; returns the text to send. */
export async function transformMessageText(text: string, side: ServerSide): Promise<string> {
  const message = tryParseJsonRpc(text);
  if (!message || !isResponse(message) || message.id === null) return text;
  const request = side.lookup(message.id) ?? inferListRequest(message);
  if (!request) return text;
  const out = await runServerPolicies(side.policies, message, request, side.ctx);
  return out === message ? text : JSON.stringify(out);
}

/** Copies the body to the client with backpressure; stops quietly when the client goes away. */
export async function relayRaw(upstream: UpstreamResponse, res: ServerResponse): Promise<void> {
  // A small answer was read whole: it goes out in one write together with the headers.
  if (upstream.whole) {
    res.end(upstream.whole);
    return;
  }
  for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
    if (res.destroyed) break;
    if (!res.write(chunk)) await drained(res);
  }
}

/** A JSON body, buffered and passed through the policies. */
export async function relayJson(
  upstream: UpstreamResponse,
  res: ServerResponse,
  side: ServerSide,
): Promise<void> {
  // Headers are already sent (without Content-Length), so the rewritten body goes out chunked.
  res.end(await transformMessageText((await wholeBody(upstream)).toString('utf8'), side));
}

export type EventRewriter = (event: SseEvent) => Promise<string> | string;

/** An SSE body: raw with keep-alives, or event by event through `rewrite`. */
export async function relaySse(
  body: Body,
  writer: SseWriter,
  rewrite: EventRewriter | undefined,
): Promise<void> {
  if (!rewrite) {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (writer.closed) break;
      await writer.write(chunk);
    }
    return;
  }
  const parser = new SseParser();
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (writer.closed) break;
    for (const event of parser.push(chunk)) await writer.write(await rewrite(event));
  }
  await writer.write(parser.flush());
}

/** The rewriter that runs server policies on SSE-framed responses. */
export function policyRewriter(side: ServerSide): EventRewriter {
  return async (event) => {
    if (event.data === undefined) return event.raw;
    const text = await transformMessageText(event.data, side);
    return text === event.data ? event.raw : withData(event, text);
  };
}
