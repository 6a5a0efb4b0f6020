/**
 * Parsing and classifying single JSON-RPC 2.0 messages. MCP removed batching in 2025-06-18, so a
 * JSON array is refused. Invalid input becomes a ProxyRejection (HTTP 400 + JSON-RPC error).
 */
import {
  RPC,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestAnnotations,
} from '../types.js';
import { reject } from './errors.js';

export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message;
}

export function isNotification(message: JsonRpcMessage): message is JsonRpcNotification {
  return 'method' in message && !('id' in message);
}

export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
  return !('method' in message);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The id of a parsed value, if it has a usable one (for error responses to invalid messages). */
function idOf(value: Record<string, unknown>): JsonRpcId | null {
  return isId(value.id) ? value.id : null;
}

/** Checks that a parsed JSON value is one JSON-RPC 2.0 message and returns it typed. */
export function toJsonRpcMessage(value: unknown): JsonRpcMessage {
  if (Array.isArray(value)) {
    throw reject(
      400,
      RPC.invalidRequest,
      'JSON-RPC batch requests are not supported (MCP removed batching in revision 2025-06-18)',
    );
  }
  if (!isObject(value)) throw reject(400, RPC.invalidRequest, 'Invalid Request: expected a JSON-RPC object');
  const id = idOf(value);
  if (value.jsonrpc !== '2.0')
    throw reject(400, RPC.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"', { id });
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method === '') {
      throw reject(400, RPC.invalidRequest, 'Invalid Request: method must be a non-empty string', { id });
    }
    if (value.params !== undefined && !isObject(value.params)) {
      throw reject(400, RPC.invalidRequest, 'Invalid Request: params must be an object', { id });
    }
    if ('id' in value && !isId(value.id)) {
      throw reject(400, RPC.invalidRequest, 'Invalid Request: id must be a string or a number', { id: null });
    }
    return value as unknown as JsonRpcRequest | JsonRpcNotification;
  }
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) {
    throw reject(400, RPC.invalidRequest, 'Invalid Request: a message needs a method, a result or an error', {
      id,
    });
  }
  if (!(isId(value.id) || value.id === null)) {
    throw reject(400, RPC.invalidRequest, 'Invalid Request: a response needs an id', { id: null });
  }
  if (hasError && !(isObject(value.error) && typeof value.error.code === 'number')) {
    throw reject(400, RPC.invalidRequest, 'Invalid Request: error must be an object with a numeric code', {
      id,
    });
  }
  return value as unknown as JsonRpcResponse;
}

/** Parses one JSON-RPC message from a request body. */
export function parseJsonRpc(body: Buffer | string): JsonRpcMessage {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw reject(400, RPC.parseError, 'Parse error: the request body is not valid JSON');
  }
  return toJsonRpcMessage(value);
}

/** Parses a message from a trusted source (the backend); undefined when it is not one. */
export function tryParseJsonRpc(text: string): JsonRpcMessage | undefined {
  try {
    return toJsonRpcMessage(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** What a request targets: the tool or prompt name, or the resource URI. */
export function messageTarget(message: JsonRpcMessage): string | undefined {
  if (!('method' in message) || message.params === undefined) return undefined;
  switch (message.method) {
    case 'tools/call':
    case 'prompts/get':
      return typeof message.params.name === 'string' ? message.params.name : undefined;
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return typeof message.params.uri === 'string' ? message.params.uri : undefined;
    default:
      return undefined;
  }
}

/** Records what the pipeline learned about a message, for audit and telemetry middlewares. */
export function annotate(annotations: RequestAnnotations, message: JsonRpcMessage): void {
  if ('method' in message) annotations.method = message.method;
  const target = messageTarget(message);
  if (target !== undefined) annotations.target = target;
  if ('id' in message && message.id !== null) annotations.id = message.id;
}

/** A key for a request id that keeps 1 and "1" apart. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`;
}
