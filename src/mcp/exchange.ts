/**
 * One client exchange (an HTTP request and its answer) as observers see it: what the transports
 * learned about its MCP message and what was decided, then a summary when it ends. Audit and
 * telemetry consume these plain facts; they never touch the HTTP request or response.
 */
import type { Identity } from './identity.js';
import { messageTarget, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from './jsonrpc.js';
import type { ClientTransportKind } from './policy.js';

/** Filled in while the exchange is served. */
export interface ExchangeRecord {
  method?: string;
  /** Tool, prompt or resource the request targets (tools/call name, resources/read uri, ...). */
  target?: string;
  id?: JsonRpcId;
  /** Set when a policy refused the message (e.g. 'authz', 'tool-filter', 'validating-webhook'). */
  deniedBy?: string;
  /** Tools whose definition differs from the pinned one, first noticed in this exchange. */
  toolDefinitionsChanged?: string[];
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
}

/** Records what a client message is (method, target, id). */
export function recordMessage(record: ExchangeRecord, message: JsonRpcMessage): void {
  if ('method' in message) record.method = message.method;
  const target = messageTarget(message);
  if (target !== undefined) record.target = target;
  if ('id' in message && message.id !== null) record.id = message.id;
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
  record: ExchangeRecord;
}

/** Watches exchanges end (audit, telemetry). */
export interface ExchangeObserver {
  /** True when the observer needs `record.response`: transports then parse answers. */
  readonly wantsResponses: boolean;
  onExchange(summary: ExchangeSummary): void;
  close(): Promise<void>;
}
