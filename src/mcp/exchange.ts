/**
 * One client exchange (an HTTP request and its answer) as observers see it: what the transports
 * learned about its MCP message and what was decided, then a summary when it ends. Audit and
 * telemetry consume these plain facts; they never touch the HTTP request or response.
 */
import type { Identity } from './identity.js';
import { messageTarget, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from './jsonrpc.js';

/** The client-facing transport a message arrived on. */
export type ClientTransportKind = 'streamable-http' | 'sse';

/** Filled in while the exchange is served. */
export interface ExchangeRecord {
  method?: string;
  /** Tool, prompt or resource the request targets (tools/call name, resources/read uri, ...). */
  target?: string;
  /**
   * The member workload the message goes to, behind an aggregate endpoint (see members.ts): what
   * the backend's resolver answered for the target, when it knew it.
   */
  backend?: string;
  id?: JsonRpcId;
  /** Set when a policy refused the message (e.g. 'authz', 'tool-filter', 'validating-webhook'). */
  deniedBy?: string;
  /** Tools whose definition differs from the pinned one, first noticed in this exchange. */
  toolDefinitionsChanged?: string[];
  /** What the guardrails found in the exchange's messages (where and which detector, never the value). */
  guardrailFindings?: GuardrailFinding[];
  /** JSON-RPC error code of the final answer, when it was an error. */
  rpcErrorCode?: number;
  /** The client-facing session the exchange belongs to, once a transport knows it. */
  sessionId?: string;
  /** The final response to the client's request, when an observer asked for responses. */
  response?: JsonRpcResponse;
  /**
   * The W3C `traceparent` of this exchange's own span, when telemetry chose it before forwarding
   * (to propagate it to the backend); the span is then made with exactly these IDs.
   */
  traceparent?: string;
  /** The protocol version an initialize request asks for. */
  requestedProtocolVersion?: string;
  /** The W3C trace context the client put in `params._meta`, which wins over its headers. */
  metaTraceContext?: TraceContextFields;
}

/** One guardrail detector's finding: which, in which direction, what was done, where in the message. */
export interface GuardrailFinding {
  detector: string;
  direction: 'to_server' | 'to_client';
  action: 'block' | 'redact' | 'warn';
  /** The JSON path of the string it was found in (`tools/call params.arguments.config`). */
  path: string;
}

/** A W3C trace context as carried in headers or `params._meta`. */
export interface TraceContextFields {
  traceparent?: string;
  tracestate?: string;
}

/** Records what a client message is (method, target, id). */
export function recordMessage(record: ExchangeRecord, message: JsonRpcMessage): void {
  if ('method' in message) record.method = message.method;
  const target = messageTarget(message);
  if (target !== undefined) record.target = target;
  if ('id' in message && message.id !== null) record.id = message.id;
  if ('method' in message && message.method === 'initialize') {
    const version = message.params?.protocolVersion;
    if (typeof version === 'string') record.requestedProtocolVersion = version;
  }
  const meta = 'method' in message ? message.params?._meta : undefined;
  if (typeof meta === 'object' && meta !== null) {
    const { traceparent, tracestate } = meta as Record<string, unknown>;
    if (typeof traceparent === 'string') {
      record.metaTraceContext = { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) };
    }
  }
}

/** Records the final response to the client's request. */
export function recordResponse(record: ExchangeRecord, response: JsonRpcResponse): void {
  record.response = response;
  if (response.error) record.rpcErrorCode = response.error.code;
}

/** An exchange that has ended. */
export interface ExchangeSummary {
  /** GET opens a stream, POST carries a message, DELETE ends a session. */
  httpMethod: string;
  path: string;
  /** The status the client was answered with. */
  status: number;
  started: number;
  ended: number;
  identity: Identity;
  clientAddress: string;
  userAgent?: string;
  transport: ClientTransportKind;
  /** Bytes of the answer's body. */
  responseBytes: number;
  /** The client's message as received, when the proxy read it. */
  requestBody?: Buffer;
  /** The client's W3C trace context headers, when it sent them. */
  traceparent?: string;
  tracestate?: string;
  /** The client's MCP-Protocol-Version header, when it sent one. */
  protocolVersion?: string;
  /** The HTTP version of the client's request ("1.1"). */
  httpVersion?: string;
  clientPort?: number;
  record: ExchangeRecord;
}

/**
 * Whether an answer must be parsed for `record.response`, judged from the request's method and
 * the answer's raw JSON text before any parse (e.g. only answers that can carry an error). A
 * screen, not a parser: it may be given several SSE events at once with their framing, so it must
 * answer true for any text that contains an answer it needs (look for markers, never parse).
 */
export type ResponseNeed = (method: string, text: string | Buffer) => boolean;

/** Every answer. */
export const everyResponse: ResponseNeed = () => true;

/**
 * Answers that may be JSON-RPC errors: one without the text `"error"` has no `error` member (a
 * server spelling the name with escapes, `"\u0065rror"`, is taken at its word as a success).
 */
export const errorResponses: ResponseNeed = (_method, text) => text.includes('"error"');

/** Watches exchanges end (audit, telemetry). */
export interface ExchangeObserver {
  /** Which answers the observer needs in `record.response`; absent: none, answers pass unparsed. */
  readonly needsResponse?: ResponseNeed;
  onExchange(summary: ExchangeSummary): void;
  close(): Promise<void>;
}
