/**
 * `tools/call` through the aggregate without the MCP SDK (issue 32; docs/aggregation.md, "Cost"):
 * the SDK's server transport and client cost the aggregate most of its CPU per call, so a call
 * whose member session is open goes on that session as JSON, with only its id and tool name
 * rewritten, and the member's answer comes back with the front id restored: as JSON when it came
 * within STREAM_AFTER_MS and nothing else had to go first, else on an event stream whose events
 * are stored for `Last-Event-ID` like the SDK transport's. A member session belongs to one front session, so progress tokens pass
 * unchanged. What a member asks during the call (sampling, elicitation, roots; on the call's own
 * stream or, as the SDK path routes it, on its session's stream) goes on the call's stream under an
 * id of the aggregate's, and the client's answer is routed back; the client's cancellation
 * reaches the member under the member-side id. Everything else, and a call whose member session
 * is not open yet or is gone (404), takes the SDK path (session.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import {
  ProtocolError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ClientCapabilities,
  type EventStore,
  type JSONRPCMessage,
  type Notification,
  type ResultTypeMap,
} from '@modelcontextprotocol/server';
import { idKey, type JsonRpcId } from '../mcp/jsonrpc.js';
import { SseParser } from '../mcp/sse.js';
import { isObject } from '../util/is-object.js';
import { log } from '../util/log.js';
import { undiciRequest } from '../util/undici-parts.js';
import { streamOf } from './events.js';
import { CALL_TIMEOUT_MS, memberError, type MemberSession } from './member-client.js';

/** What a member may ask the client during a call, and the capability the front client must have declared. */
const FORWARDED = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
} as const satisfies Record<string, keyof ClientCapabilities>;
export type ForwardedMethod = keyof typeof FORWARDED;

/** A front request waiting on a member: what the member asks or says meanwhile goes on its stream. */
export interface Related {
  send<M extends ForwardedMethod>(
    request: { method: M; params?: Record<string, unknown> },
    options: { signal: AbortSignal; timeout: number },
  ): Promise<ResultTypeMap[M]>;
  notify(notification: Notification): Promise<void>;
}

export interface DirectDeps {
  /** The member behind an exposed tool name and the tool's own name; undefined lets the SDK path answer. */
  tool(name: string): Promise<{ member: string; name: string } | undefined>;
  /** The member's open session, if its SDK client has one on streamable HTTP. */
  memberSession(member: string): MemberSession | undefined;
  /** The member forgot its session (a restart): the SDK path opens a new one. */
  drop(member: string): void;
  /** Marks a front request as waiting on `member` until the returned function is called. */
  waiting(member: string, related: Related): () => void;
  clientCapabilities(): ClientCapabilities | undefined;
  /** The front session's event store (the SDK transport replays finished streams from it). */
  events: EventStore;
  agent: Dispatcher;
  /** The `retry` hint of the priming event. */
  retryMs: number;
}

type Message = Record<string, unknown> & {
  id?: JsonRpcId;
  method?: string;
  params?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** An event written on a call's stream, kept while the call runs for a client that resumes it. */
interface Sent {
  id: string;
  text: string;
}

interface Call {
  member: string;
  session: MemberSession;
  frontId: JsonRpcId;
  /** A string with a prefix: the SDK client's own ids on the same member session are numbers. */
  memberId: string;
  res: ServerResponse;
  /** The front request's protocol version (its priming event depends on it). */
  version: string | undefined;
  abort: AbortController;
  /** Why it was cut short, if it was. */
  ended?: 'cancelled' | 'timeout' | 'closed';
  answered: boolean;
  /** Its event stream, once something had to go to the client before the answer. */
  stream?: { id: string; sent: Sent[]; res: ServerResponse | undefined };
  /** Writes on the stream, in order (storing an event is asynchronous). */
  queue: Promise<void>;
}

/** Ids this path gives: on member sessions, on the front's streams, and its front stream ids. */
const MEMBER_ID = 'moat-aggregate-call-';
const FORWARD_ID = 'moat-aggregate-ask-';
const STREAM_ID = 'moat-aggregate-direct-';

/**
 * A call its member has not answered within this long gets its event stream (and the priming
 * event a client resumes from), as every call has on the SDK path; a quicker one is answered JSON.
 */
const STREAM_AFTER_MS = 1_000;
/** Resumptions of a member's stream in a row that brought no event before the call fails (the SDK client's bound). */
const MEMBER_RESUMES = 2;
/** The wait before resuming a member's stream when it gave no `retry` hint (the SDK client's default). */
const MEMBER_RETRY_MS = 1_000;

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
};

/** The client still reads this response. */
const live = (res: ServerResponse) => !res.writableEnded && !res.destroyed;
const isRequest = (m: Message) => typeof m.method === 'string' && m.id !== undefined;
const isResponse = (m: Message) => m.method === undefined && m.id !== undefined;

/** A front request the direct path can take: a well-formed tools/call on headers the SDK transport would accept. */
function directCall(req: IncomingMessage, body: unknown): Message | undefined {
  const m = body as Message;
  if (!isObject(m) || m.jsonrpc !== '2.0' || m.method !== 'tools/call') return undefined;
  if (typeof m.id !== 'string' && typeof m.id !== 'number') return undefined;
  const params = m.params;
  if (!isObject(params) || typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return undefined;
  if (!(req.headers['content-type'] ?? '').includes('application/json')) return undefined;
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  return m;
}

/** The direct calls of one front session. */
export class DirectCalls {
  /** Running calls by the front id's key. */
  private readonly calls = new Map<string, Call>();
  /** What members asked the client, by the id the client sees: where its answer goes. */
  private readonly asked = new Map<string, { call: Call; reply: (answer: Message) => void }>();
  private counter = 0;

  constructor(
    private readonly deps: DirectDeps,
    private readonly sessionId: () => string | undefined,
  ) {}

  /**
   * Takes a POSTed message this path serves — a tools/call, a client's answer to what a member
   * asked, a cancellation of a direct call — and answers it; false leaves it to the SDK transport
   * (nothing was written).
   */
  async take(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<boolean> {
    const m = body as Message;
    if (isObject(m) && isResponse(m)) return this.answered(res, m);
    if (isObject(m) && m.method === 'notifications/cancelled') return this.cancelled(res, m);
    const request = directCall(req, body);
    if (!request) return false;
    const target = await this.deps.tool(request.params!.name as string);
    const session = target && this.deps.memberSession(target.member);
    if (!target || !session) return false;
    const call: Call = {
      member: target.member,
      session,
      frontId: request.id!,
      memberId: `${MEMBER_ID}${++this.counter}`,
      res,
      version: req.headers['mcp-protocol-version'] as string | undefined,
      abort: new AbortController(),
      answered: false,
      queue: Promise.resolve(),
    };
    return this.run(call, {
      ...request,
      id: call.memberId,
      params: { ...request.params, name: target.name },
    });
  }

  /** A client resuming (GET with Last-Event-ID) the stream of a call still running; false if it is none. */
  resume(req: IncomingMessage, res: ServerResponse): boolean {
    const last = req.headers['last-event-id'];
    const streamId = typeof last === 'string' ? streamOf(last) : undefined;
    if (!streamId?.startsWith(STREAM_ID)) return false;
    const stream = [...this.calls.values()].find((c) => !c.answered && c.stream?.id === streamId)?.stream;
    if (!stream) return false; // finished: the SDK transport replays it from the event store
    stream.res?.end();
    this.open(res);
    for (const event of stream.sent) if (event.id > last!) res.write(event.text);
    this.attach(stream, res);
    return true;
  }

  close(): void {
    for (const call of this.calls.values()) this.cut(call, 'closed');
  }

  private async run(call: Call, message: Message): Promise<boolean> {
    const key = idKey(call.frontId);
    this.calls.set(key, call);
    const release = this.deps.waiting(call.member, this.related(call));
    let timer = setTimeout(() => {
      if (!call.answered) this.stream(call);
      timer = setTimeout(() => this.cut(call, 'timeout'), CALL_TIMEOUT_MS - STREAM_AFTER_MS);
    }, STREAM_AFTER_MS);
    try {
      const answer = await this.post(call.session, message, call.abort.signal);
      if (answer.statusCode === 404 && !call.stream) {
        await answer.body.dump();
        this.deps.drop(call.member);
        return false;
      }
      const type = String(answer.headers['content-type'] ?? '');
      if (answer.statusCode < 200 || answer.statusCode >= 300)
        throw new Error(`Error POSTing to endpoint: ${await answer.body.text()}`);
      if (type.startsWith('application/json')) {
        const message = parseJson(await answer.body.text());
        if (!message) throw new Error('the member answered JSON that is not a JSON-RPC message');
        await this.fromMember(call, message);
      } else if (type.startsWith('text/event-stream')) await this.relay(call, answer.body);
      else throw new Error(`Unexpected content type: ${type}`);
      if (!call.answered) throw new Error('the member did not answer the call');
    } catch (err) {
      await this.fail(call, err);
    } finally {
      clearTimeout(timer);
      release();
      if (this.calls.get(key) === call) this.calls.delete(key);
      for (const [id, asked] of this.asked) if (asked.call === call) this.asked.delete(id);
    }
    return true;
  }

  private post(session: MemberSession, message: object, signal?: AbortSignal) {
    return this.request(session, {
      method: 'POST',
      headers: session.headers,
      body: JSON.stringify(message),
      signal,
    });
  }

  private request(
    session: MemberSession,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; signal?: AbortSignal },
  ) {
    return undiciRequest.call(this.deps.agent, {
      origin: session.origin,
      path: session.path,
      ...init,
      // CALL_TIMEOUT_MS bounds the call; a member's stream may be quiet for long.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** Sends a message on the member session that needs no answer (the member says 202). */
  private tell(session: MemberSession, message: object): void {
    void this.post(session, message).then(
      (answer) => answer.body.dump(),
      (err: unknown) => log().debug({ err: String(err) }, 'aggregate: a message to a member was lost'),
    );
  }

  /**
   * The member's event stream, message by message, until it ends after the answer. One that ends
   * before (a server that polls: it closes the stream and the client comes back) is resumed with
   * `Last-Event-ID` after the member's `retry` hint, as the SDK client would.
   */
  private async relay(call: Call, first: AsyncIterable<Buffer>): Promise<void> {
    this.stream(call);
    let body = first;
    let lastEventId: string | undefined;
    let retryMs = MEMBER_RETRY_MS;
    let barren = 0;
    for (;;) {
      const parser = new SseParser();
      let fresh = false;
      for await (const chunk of body) {
        for (const event of parser.push(chunk)) {
          if (event.id !== undefined) [lastEventId, fresh] = [event.id, true];
          if (event.retry !== undefined) retryMs = event.retry;
          const message = event.data ? parseJson(event.data) : undefined;
          if (message) await this.fromMember(call, message);
        }
      }
      barren = fresh ? 0 : barren + 1;
      if (call.answered || lastEventId === undefined || barren > MEMBER_RESUMES) return;
      await sleep(retryMs, undefined, { signal: call.abort.signal });
      body = await this.resumeMember(call, lastEventId);
    }
  }

  private async resumeMember(call: Call, lastEventId: string): Promise<AsyncIterable<Buffer>> {
    const { 'content-type': _json, ...headers } = call.session.headers;
    const answer = await this.request(call.session, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': lastEventId },
      signal: call.abort.signal,
    });
    if (answer.statusCode !== 200)
      throw new Error(
        `Failed to reconnect SSE stream: HTTP ${answer.statusCode} ${await answer.body.text()}`,
      );
    return answer.body;
  }

  /** One message from the member on the call's answer: the answer, or what the member says or asks meanwhile. */
  private async fromMember(call: Call, m: Message): Promise<void> {
    if (call.answered) return;
    if (isResponse(m)) {
      if (m.id !== call.memberId) throw new Error('the member answered something other than the call');
      call.answered = true;
      return this.finish(call, { ...m, id: call.frontId });
    }
    if (isRequest(m) && this.forwardable(m.method!)) {
      const memberId = m.id!;
      this.ask(call, m, (answer) => this.tell(call.session, { ...answer, id: memberId }));
      return;
    }
    if (m.method === 'notifications/progress' || m.method === 'notifications/message')
      return this.emit(call, m);
    // Anything else (pings, list changes, updates) is the member session's SDK client's, as on its own stream.
    call.session.deliver(m as JSONRPCMessage);
  }

  private forwardable(method: string): boolean {
    const capability = FORWARDED[method as ForwardedMethod];
    return capability !== undefined && this.deps.clientCapabilities()?.[capability] !== undefined;
  }

  /** The call as a related request, for what reaches the member session's SDK client meanwhile. */
  private related(call: Call): Related {
    return {
      send: (request, options) =>
        new Promise((resolve, reject) => {
          if (call.answered) return reject(new Error('the call it came with was answered'));
          let id = '';
          const settle = (outcome: () => void) => {
            clearTimeout(timer);
            options.signal.removeEventListener('abort', onAbort);
            this.asked.delete(idKey(id));
            outcome();
          };
          const onAbort = () => settle(() => reject(new Error('the member cancelled its request')));
          const timer = setTimeout(
            () => settle(() => reject(new Error('Request timed out'))),
            options.timeout,
          );
          options.signal.addEventListener('abort', onAbort, { once: true });
          id = this.ask(call, request, (answer) =>
            settle(() =>
              answer.error
                ? reject(new ProtocolError(answer.error.code, answer.error.message, answer.error.data))
                : resolve(answer.result as never),
            ),
          );
        }),
      notify: (notification) => (call.answered ? Promise.resolve() : this.emit(call, notification)),
    };
  }

  /** Asks the client on the call's stream under an id of the aggregate's; `reply` gets its answer. */
  private ask(call: Call, request: Message, reply: (answer: Message) => void): string {
    const id = `${FORWARD_ID}${++this.counter}`;
    this.asked.set(idKey(id), { call, reply });
    void this.emit(call, { jsonrpc: '2.0', id, method: request.method, params: request.params });
    return id;
  }

  /** The answer goes as JSON when the call has no stream yet, else as the stream's last event. */
  private async finish(call: Call, answer: Message): Promise<void> {
    if (call.stream) {
      await this.emit(call, answer);
      call.stream.res?.end();
      return;
    }
    if (!live(call.res)) return; // the client is gone, and a JSON answer cannot be resumed
    call.res.writeHead(200, { 'content-type': 'application/json', ...this.sessionHeader() });
    call.res.end(JSON.stringify(answer));
  }

  /** The call's event stream, opened on first need with the priming event the SDK transport sends. */
  private stream(call: Call): NonNullable<Call['stream']> {
    if (call.stream) return call.stream;
    const stream = { id: `${STREAM_ID}${++this.counter}`, sent: [], res: undefined };
    call.stream = stream;
    this.open(call.res);
    this.attach(stream, call.res);
    if (call.version !== undefined && call.version >= '2025-11-25') {
      const retry = this.deps.retryMs;
      void this.enqueue(call, {} as JSONRPCMessage, (id) => `id: ${id}\nretry: ${retry}\ndata: \n\n`);
    }
    return stream;
  }

  private emit(call: Call, message: Message): Promise<void> {
    this.stream(call);
    return this.enqueue(
      call,
      message as JSONRPCMessage,
      (id) => `event: message\nid: ${id}\ndata: ${JSON.stringify(message)}\n\n`,
    );
  }

  /** Stores an event, then writes it: in order, since storing is asynchronous. */
  private enqueue(call: Call, message: JSONRPCMessage, text: (id: string) => string): Promise<void> {
    const stream = call.stream!;
    call.queue = call.queue.then(async () => {
      const event = { id: '', text: '' };
      event.id = await this.deps.events.storeEvent(stream.id, message);
      event.text = text(event.id);
      stream.sent.push(event);
      if (stream.res && live(stream.res)) stream.res.write(event.text);
    });
    return call.queue;
  }

  private open(res: ServerResponse): void {
    if (res.headersSent) return;
    res.writeHead(200, { ...SSE_HEADERS, ...this.sessionHeader() });
    res.flushHeaders();
  }

  /** `res` carries the stream's events from now on, until its client goes. */
  private attach(stream: NonNullable<Call['stream']>, res: ServerResponse): void {
    stream.res = res;
    res.once('close', () => {
      if (stream.res === res) stream.res = undefined;
    });
  }

  private sessionHeader(): Record<string, string> {
    const id = this.sessionId();
    return id ? { 'mcp-session-id': id } : {};
  }

  /** The call failed or was cut short: the client gets an error naming the member, unless it cancelled. */
  private async fail(call: Call, err: unknown): Promise<void> {
    if (call.answered) return;
    call.answered = true;
    if (call.ended === 'cancelled' || call.ended === 'closed') {
      // A cancelled request gets no answer.
      if (!call.stream && live(call.res)) this.open(call.res);
      await call.queue;
      (call.stream?.res ?? call.res).end();
      return;
    }
    const error = memberError(call.member, call.ended === 'timeout' ? new Error('Request timed out') : err);
    const { code, data } = error as ProtocolError;
    const body = { code, message: error.message, ...(data !== undefined && { data }) };
    await this.finish(call, { jsonrpc: '2.0', id: call.frontId, error: body });
  }

  /** Ends a running call; the member is told (it may still be working on it). An answered one only stops being read. */
  private cut(call: Call, why: NonNullable<Call['ended']>, reason?: unknown): void {
    if (call.ended) return;
    call.ended = why;
    if (call.answered) return call.abort.abort();
    const params = { requestId: call.memberId, ...(reason !== undefined && { reason }) };
    this.tell(call.session, { jsonrpc: '2.0', method: 'notifications/cancelled', params });
    call.abort.abort();
  }

  /** The client's answer to what a member asked: where it was asked from. */
  private answered(res: ServerResponse, m: Message): boolean {
    const key = idKey(m.id!);
    const asked = this.asked.get(key);
    if (!asked) return false;
    this.asked.delete(key);
    asked.reply(m);
    res.writeHead(202).end();
    return true;
  }

  private cancelled(res: ServerResponse, m: Message): boolean {
    const requestId = m.params?.requestId;
    const call =
      typeof requestId === 'string' || typeof requestId === 'number'
        ? this.calls.get(idKey(requestId))
        : undefined;
    if (!call) return false;
    this.cut(call, 'cancelled', m.params?.reason);
    res.writeHead(202).end();
    return true;
  }
}

/** A JSON-RPC message from its text, if it is one. */
function parseJson(text: string): Message | undefined {
  try {
    const m = JSON.parse(text) as unknown;
    return isObject(m) ? m : undefined;
  } catch {
    return undefined;
  }
}
