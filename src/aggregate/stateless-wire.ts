/**
 * The bytes of the aggregate's 2026-07-28 face: answers it writes itself (JSON, or one SSE event
 * for a client that accepts only streams), and a client's request sent on to a member's proxy
 * with only what routing changes (the name, the `Mcp-Name` header), its answer streamed back as
 * the member gave it. A 2026-07-28 request carries everything in itself (envelope, capabilities,
 * input responses), so nothing else is kept or mapped here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonRpcId, JsonRpcRequest } from '../mcp/jsonrpc.js';
import { RPC } from '../mcp/jsonrpc.js';
import type { Dispatcher } from 'undici';
import { httpStatusOfError } from '../mcp/envelope.js';
import { undiciRequest } from '../util/undici-parts.js';

/** The request field `Mcp-Name` mirrors, per method (2026-07-28). */
const NAME_FIELD: Record<string, 'name' | 'uri' | undefined> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/** Headers of the client's request a member must see as they were: the revision, SEP-2243 parameters, trace context. */
function carried(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value !== 'string') continue;
    if (
      name === 'mcp-protocol-version' ||
      name.startsWith('mcp-param-') ||
      name === 'traceparent' ||
      name === 'tracestate'
    )
      out[name] = value;
  }
  return out;
}

/** An `Mcp-Name` value: as is when printable ASCII, else the standard's Base64 form. */
function nameHeader(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** Whether the client takes a JSON answer (else one SSE event). */
function acceptsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return accept === '' || /application\/json|\*\/\*/.test(accept);
}

/** Writes one JSON-RPC message as the whole answer. */
export function answer(req: IncomingMessage, res: ServerResponse, message: object, status = 200): void {
  const text = JSON.stringify(message);
  if (acceptsJson(req)) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
    return;
  }
  res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end(`event: message\ndata: ${text}\n\n`);
}

/** A JSON-RPC error answer, with the HTTP status the 2026-07-28 binding gives its code. */
export function answerError(
  req: IncomingMessage,
  res: ServerResponse,
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): void {
  const error = data === undefined ? { code, message } : { code, message, data };
  answer(req, res, { jsonrpc: '2.0', id, error }, httpStatusOfError(code));
}

/** A member's answer: status, content type, and the body as it streams. */
export interface MemberAnswer {
  statusCode: number;
  contentType: string | undefined;
  body: AsyncIterable<Buffer> & { dump(): Promise<void> };
}

export interface Forwarded {
  /** The aggregator's connection pools to its members. */
  agent: Dispatcher;
  /** The member's proxy URL. */
  url: string;
  /** The request as the member gets it (its name already the member's own). */
  message: JsonRpcRequest;
  /** Aborts the member's request: the client went away, or the call's bound passed. */
  signal: AbortSignal;
}

/** Sends a client's request to a member's proxy, headers carried over and `Mcp-Method`/`Mcp-Name` matching the body. */
export async function sendToMember(req: IncomingMessage, forwarded: Forwarded): Promise<MemberAnswer> {
  const { message } = forwarded;
  const field = NAME_FIELD[message.method];
  const name = field === undefined ? undefined : message.params?.[field];
  const { origin, pathname, search } = new URL(forwarded.url);
  const answer = await undiciRequest.call(forwarded.agent, {
    origin,
    path: `${pathname}${search}`,
    method: 'POST',
    headers: {
      ...carried(req),
      'content-type': 'application/json',
      accept: req.headers.accept ?? 'application/json, text/event-stream',
      'mcp-method': message.method,
      ...(typeof name === 'string' ? { 'mcp-name': nameHeader(name) } : {}),
    },
    body: JSON.stringify(message),
    signal: forwarded.signal,
    // The caller's signal bounds the exchange; a listen may be quiet for long.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const type = answer.headers['content-type'];
  return {
    statusCode: answer.statusCode,
    contentType: typeof type === 'string' ? type : undefined,
    body: answer.body as MemberAnswer['body'],
  };
}

/** Streams a member's answer to the client as it came: status, content type, every byte. */
export async function relayAnswer(upstream: MemberAnswer, res: ServerResponse): Promise<void> {
  const type = upstream.contentType;
  const stream = type?.startsWith('text/event-stream') === true;
  res.writeHead(upstream.statusCode, {
    ...(type ? { 'content-type': type } : {}),
    ...(stream ? { 'cache-control': 'no-cache' } : {}),
  });
  if (stream) res.flushHeaders();
  for await (const chunk of upstream.body) {
    if (res.destroyed) break;
    res.write(chunk);
  }
  res.end();
}

/** The error a client gets when its member cannot be reached. */
export function unreachable(
  req: IncomingMessage,
  res: ServerResponse,
  id: JsonRpcId,
  member: string,
  err: unknown,
): void {
  const reason = err instanceof Error ? err.message : String(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  const error = {
    code: RPC.internalError,
    message: `aggregate member ${member} is unreachable or failed: ${reason}`,
  };
  answer(req, res, { jsonrpc: '2.0', id, error }, 502);
}
