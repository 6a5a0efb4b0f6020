/**
 * Relays an upstream response body to the client: raw bytes when nothing needs to look inside,
 * otherwise message by message (JSON or SSE-framed) through the server-side policies.
 */
import type { ServerResponse } from 'node:http';
import { SseParser, withData, type SseEvent } from '../../mcp/sse.js';
import { drained, endsWithBlankLine, type SseWriter } from '../pipeline/sse.js';
import { BrokenJsonAnswer, JsonFrameSplitter, type JsonFrame } from '../pipeline/json-frames.js';
import { answerLabel } from '../pipeline/media-type.js';
import { clientHeaders, MAX_ANSWER_BYTES, wholeBody, type UpstreamResponse } from './upstream-client.js';
import type { BodyFlow, UpstreamExchange } from './undici-pool.js';
import { UpstreamTimeout } from '../pipeline/upstream-timeout.js';
import { reject, type ProxyRejection } from '../pipeline/errors.js';
import { errorMessage } from '../../util/errors.js';
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
} from '../../mcp/jsonrpc.js';
import {
  runServerPolicies,
  screenServerMessage,
  type MessageContext,
  type MessagePolicy,
  type ServerOriginated,
} from '../../mcp/policy.js';

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
  /** The id of the request this answer is for (null: none, e.g. a stream the client opened). */
  id?: JsonRpcId | null;
  /** Sends the server the proxy's answer to a server request a policy refused to pass on. */
  answerServer?: (answer: JsonRpcResponse) => void;
}

/** What replaces a message the response policies could not read (fail closed), for request `id`. */
function unreadableAnswer(id: JsonRpcId | null | undefined): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: id ?? null,
    error: {
      code: -32603,
      message: "The MCP server's answer could not be read, so the proxy's policies could not check it",
    },
  });
}

/** The list method a result answers, by its shape. */
const LIST_RESULTS: Array<[field: string, method: string]> = [
  ['tools', 'tools/list'],
  ['prompts', 'prompts/list'],
  ['resources', 'resources/list'],
  ['resourceTemplates', 'resources/templates/list'],
];

/** The result keys of list answers, as their raw text shows them (`\\u` escapes may hide one). */
const LIST_KEYS = ['"tools"', '"prompts"', '"resources"', '"resourceTemplates"', '\\u'];

/**
 * The raw text may hold a list result (a hostile server may answer a list request on another
 * request's stream): such a message is parsed whatever the request this stream answers.
 */
export function mayHoldList(text: string | Buffer): boolean {
  for (const key of LIST_KEYS) if (text.indexOf(key) !== -1) return true;
  return false;
}

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
  if (!message) return text.trim() === '' ? text : unreadableAnswer(side.id);
  return transformMessage(message, text, side).catch((err: unknown) => {
    if (err instanceof BrokenJsonAnswer) return unreadableAnswer(side.id);
    throw err;
  });
}

const LIST_METHODS = new Set(LIST_RESULTS.map(([, method]) => method));

async function transformMessage(message: JsonRpcMessage, text: string, side: ServerSide): Promise<string> {
  if (!isResponse(message)) return serverMessageText(message, text, side);
  if (message.id === null) return text;
  const request = side.lookup(message.id) ?? inferListRequest(message);
  if (!request) return text;
  // A list with a key twice: parsers differ on which one counts, so the client might read
  // the copy the policies did not see.
  const problem = LIST_METHODS.has(request.method) ? jsonShapeProblem(text, true) : undefined;
  if (problem !== undefined) throw new BrokenJsonAnswer(problem);
  const out = await runServerPolicies(side.policies, message, request, side.ctx);
  return out === message ? text : JSON.stringify(out);
}

/**
 * A message the server sent of its own accord, through the policies: the text to pass on, '' when
 * refused (a refused request is answered to the server instead).
 */
function serverMessageText(message: ServerOriginated, text: string, side: ServerSide): string {
  const passed = screenServerMessage(side.policies, message, side.ctx, side.answerServer);
  return passed === undefined ? '' : passed === message ? text : JSON.stringify(passed);
}

/** An answer that must not reach the client: a clean 502 for the request instead. */
function brokenAnswer(why: string, id: JsonRpcId | null): ProxyRejection {
  return reject(502, RPC.serverError, `The MCP backend sent a broken answer: ${why}`, { id });
}

/**
 * A non-stream answer, read whole and checked before any byte of it reaches the client, then
 * passed through the server-side policies (`side`). A truncated body, one over the size limit,
 * invalid JSON, nesting deeper than MAX_JSON_DEPTH (jsonShapeProblem), or a 2xx JSON answer that is not a JSON-RPC
 * message all become a 502 with a JSON-RPC error for request `id`. `json` (by default: the
 * answer's label says JSON) makes the body be read as JSON: one message, or JSON lines.
 */
export async function answerBody(
  upstream: UpstreamResponse,
  id: JsonRpcId | null,
  side: ServerSide | undefined,
  json = answerLabel(upstream.headers) === 'json',
): Promise<Buffer> {
  let body: Buffer;
  try {
    body = await wholeBody(upstream);
  } catch (err) {
    if (err instanceof UpstreamTimeout) throw err;
    throw brokenAnswer(errorMessage(err), id);
  }
  if (body.length === 0 || !json) return body;
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON lines, or a message after a byte order mark.
    return framedBody(body, upstream.statusCode, id, side);
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
  const out = await screened(message, text, side, id);
  return out === text ? body : Buffer.from(out);
}

/** transformMessage, with a message the policies must not pass as it is refused: a 502 for `id`. */
async function screened(
  message: JsonRpcMessage,
  text: string,
  side: ServerSide,
  id: JsonRpcId | null,
): Promise<string> {
  try {
    return await transformMessage(message, text, side);
  } catch (err) {
    if (err instanceof BrokenJsonAnswer) throw brokenAnswer(err.message, id);
    throw err;
  }
}

/** A whole body of several JSON messages: each checked and screened as one answer would be. */
async function framedBody(
  body: Buffer,
  status: number,
  id: JsonRpcId | null,
  side: ServerSide | undefined,
): Promise<Buffer> {
  const splitter = new JsonFrameSplitter(MAX_ANSWER_BYTES);
  let frames: JsonFrame[];
  let rest: Buffer;
  try {
    frames = splitter.push(body);
    rest = splitter.end();
  } catch (err) {
    throw brokenAnswer(err instanceof BrokenJsonAnswer ? err.message : 'the body is not valid JSON', id);
  }
  const parts: Buffer[] = [];
  for (const frame of frames) parts.push(await checkedFrame(frame, status, id, side));
  parts.push(rest);
  return Buffer.concat(parts);
}

/**
 * One message of a JSON answer, checked as a whole answer is (valid JSON, its depth, a JSON-RPC
 * message when the status is 2xx) and through the policies; what to send for it.
 */
async function checkedFrame(
  frame: JsonFrame,
  status: number,
  id: JsonRpcId | null,
  side: ServerSide | undefined,
): Promise<Buffer> {
  let value: unknown;
  try {
    value = JSON.parse(frame.text);
  } catch {
    throw brokenAnswer('the body is not valid JSON', id);
  }
  const problem = jsonShapeProblem(frame.text, false);
  if (problem !== undefined) throw brokenAnswer(problem, id);
  if (status >= 300) return frame.raw;
  let message: JsonRpcMessage;
  try {
    message = toJsonRpcMessage(value);
  } catch (err) {
    throw brokenAnswer(`not a JSON-RPC message (${errorMessage(err)})`, id);
  }
  if (!side || (side.needed && !side.needed(frame.text))) return frame.raw;
  const out = await screened(message, frame.text, side, id);
  if (out === '') return Buffer.alloc(0);
  // A rewritten message keeps the line end it came with.
  return out === frame.text
    ? frame.raw
    : Buffer.concat([Buffer.from(out), frame.raw.subarray(frameEnd(frame))]);
}

/** Where a frame's message ends in its raw bytes (the whitespace after it follows). */
function frameEnd(frame: JsonFrame): number {
  let end = frame.raw.length;
  while (end > 0 && isSpaceByte(frame.raw[end - 1] as number)) end--;
  return end;
}

function isSpaceByte(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Sends a non-stream answer once it is read whole and checked (answerBody), with its own length. */
export async function relayAnswer(
  upstream: UpstreamResponse,
  res: ServerResponse,
  id: JsonRpcId | null,
  side: ServerSide | undefined,
  extraHeaders: Record<string, string> = {},
  json?: boolean,
): Promise<void> {
  const body = await answerBody(upstream, id, side, json);
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
  ended: () => Promise<void> | void,
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
        let last: Promise<void> | void;
        try {
          last = ended();
        } catch (err) {
          return finish(err instanceof Error ? err : new Error(String(err)));
        }
        if (last)
          last.then(
            () => finish(),
            (err: unknown) => finish(err as Error),
          );
        else finish();
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
      // An event the stream ended without its blank line is screened like any other (some
      // clients read it).
      const rest = parser.flush();
      if (rest.raw === '') return writer.end();
      const text = rewrite(rest);
      if (typeof text === 'string') return end(writer, text);
      return text.then((t) => end(writer, t));
    },
  );
}

function end(writer: SseWriter, last: string): void {
  void writer.write(last);
  writer.end();
}

/**
 * A JSON answer of unknown length (chunked): one message, or JSON lines on a response that may
 * stay open. Each message is checked (answerBody's checks) and screened by `side` as soon as it
 * is whole, and sent on at once, as it came unless a policy rewrote it. The head waits for the
 * first message: a broken first message is a clean 502 for request `id`; a broken later one cuts
 * the response off (the client sees it end early, never an unchecked message).
 */
export async function relayJsonStream(
  upstream: UpstreamResponse,
  res: ServerResponse,
  id: JsonRpcId | null,
  side: ServerSide | undefined,
  extraHeaders: Record<string, string>,
): Promise<void> {
  const splitter = new JsonFrameSplitter(MAX_ANSWER_BYTES);
  const status = upstream.statusCode;
  const start = (): void => {
    if (!res.headersSent)
      res.writeHead(status, { ...clientHeaders(upstream.headers, true), ...extraHeaders });
  };
  const send = (bytes: Buffer): Promise<void> | undefined => {
    start();
    return bytes.length === 0 || res.write(bytes) ? undefined : drained(res);
  };
  const write = (chunk: Buffer): Promise<void> | undefined => {
    let frames: JsonFrame[];
    try {
      frames = splitter.push(chunk);
    } catch (err) {
      throw brokenAnswer((err as Error).message, id);
    }
    return frames.length === 0 ? undefined : sendFrames(frames);
  };
  const sendFrames = async (frames: JsonFrame[]): Promise<void> => {
    for (const frame of frames) await send(await checkedFrame(frame, status, id, side));
  };
  try {
    await pump(
      upstream,
      write,
      () => res.destroyed || res.writableEnded,
      () => {
        let rest: Buffer;
        try {
          rest = splitter.end();
        } catch (err) {
          throw brokenAnswer((err as Error).message, id);
        }
        void send(rest);
        res.end();
      },
    );
  } catch (err) {
    // Nothing sent yet: the caller answers (a 502 for a broken answer, a 504 for a timeout).
    if (!res.headersSent) throw err;
    cutOff(res);
  }
}

/**
 * Ends a response mid-body so the client sees it cut off, after what was written reaches it: a
 * head and messages written in this tick are still corked in the response itself (Node 24.2x
 * holds them there, not in the socket), so the socket is ended only once they have been handed
 * on, and then after it has flushed them (the client would otherwise get no response at all).
 */
function cutOff(res: ServerResponse): void {
  setImmediate(() => {
    const socket = res.socket;
    if (socket) socket.destroySoon();
    else res.destroy();
  });
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
    // Lines no SSE client reads as a field pass nowhere on a screened stream: a client that
    // read them anyway must not find what the policies did not see.
    if (event.data === undefined) return event.stray ? '' : event.raw;
    const data = event.data;
    // Events no policy needs (screened by their raw text) pass as they came, synchronously.
    if (side.needed && !side.needed(data)) return event.stray ? withData(event, data) : event.raw;
    return transformMessageText(data, side).then((text) =>
      // '': a message the policies refused, so no event at all.
      text === '' && data !== '' ? '' : text === data && !event.stray ? event.raw : withData(event, text),
    );
  };
}
