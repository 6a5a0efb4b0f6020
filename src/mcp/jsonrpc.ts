import { isObject } from '../util/is-object.js';
/**
 * JSON-RPC 2.0 as MCP uses it: message types, the error codes Moat answers with, and parsing and
 * classifying single messages. MCP removed batching in 2025-06-18, so a JSON array is refused.
 * Invalid input throws an InvalidMessage (a JSON-RPC error, never an HTTP status: the edge maps it).
 */

export type JsonRpcId = string | number;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: unknown;
  error?: JsonRpcError;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** Error codes Moat uses in JSON-RPC error bodies. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Generic server-side failure (timeouts, backend unavailable). */
  serverError: -32000,
  sessionNotFound: -32001,
  /** 2026-07-28: Mcp-Method/Mcp-Name header missing or not matching the body. */
  headerMismatch: -32020,
  missingClientCapability: -32021,
  unsupportedProtocolVersion: -32022,
} as const;

/** A message that is not valid JSON-RPC: the error to answer with, and the id when one was readable. */
export class InvalidMessage extends Error {
  constructor(
    readonly error: JsonRpcError,
    readonly id: JsonRpcId | null = null,
  ) {
    super(error.message);
    this.name = 'InvalidMessage';
  }
}

function invalid(message: string, id: JsonRpcId | null = null): InvalidMessage {
  return new InvalidMessage({ code: RPC.invalidRequest, message }, id);
}

export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message;
}

export function isNotification(message: JsonRpcMessage): message is JsonRpcNotification {
  return 'method' in message && !('id' in message);
}

export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
  return !('method' in message);
}

/** A string, or an integer a JSON peer in any language reads exactly (no floats, no 2^53 and above). */
function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/** The id of a parsed value, if it has a usable one (for error responses to invalid messages). */
function idOf(value: Record<string, unknown>): JsonRpcId | null {
  return isId(value.id) ? value.id : null;
}

/** Checks that a parsed JSON value is one JSON-RPC 2.0 message and returns it typed. */
export function toJsonRpcMessage(value: unknown): JsonRpcMessage {
  if (Array.isArray(value)) {
    throw invalid('JSON-RPC batch requests are not supported (MCP removed batching in revision 2025-06-18)');
  }
  if (!isObject(value)) throw invalid('Invalid Request: expected a JSON-RPC object');
  const id = idOf(value);
  if (value.jsonrpc !== '2.0') throw invalid('Invalid Request: jsonrpc must be "2.0"', id);
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method === '') {
      throw invalid('Invalid Request: method must be a non-empty string', id);
    }
    if (value.params !== undefined && !isObject(value.params)) {
      throw invalid('Invalid Request: params must be an object', id);
    }
    if ('id' in value && !isId(value.id))
      throw invalid('Invalid Request: id must be a string or a safe integer');
    return value as unknown as JsonRpcRequest | JsonRpcNotification;
  }
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) {
    throw invalid('Invalid Request: a message needs a method, a result or an error', id);
  }
  if (!(isId(value.id) || value.id === null)) throw invalid('Invalid Request: a response needs an id');
  if (hasError && !(isObject(value.error) && typeof value.error.code === 'number')) {
    throw invalid('Invalid Request: error must be an object with a numeric code', id);
  }
  return value as unknown as JsonRpcResponse;
}

/**
 * Parses one JSON-RPC message from a client's request body, strictly: one JSON value and nothing
 * after it, no key twice in an object (in any case) at any depth, nesting within MAX_JSON_DEPTH,
 * then the envelope rules of toJsonRpcMessage. A leading UTF-8 BOM is skipped.
 */
export function parseJsonRpc(body: Buffer | string): JsonRpcMessage {
  let text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidMessage({
      code: RPC.parseError,
      message: 'Parse error: the request body is not valid JSON',
    });
  }
  const problem = jsonShapeProblem(text, true);
  if (problem !== undefined) {
    const id =
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? idOf(value as Record<string, unknown>)
        : null;
    throw invalid(`Invalid Request: ${problem}`, id);
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

/** A key for a request id that keeps 1 and "1" apart. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`;
}

/** Deepest nesting of arrays and objects Moat passes on; deeper JSON breaks clients (stack overflow). */
export const MAX_JSON_DEPTH = 1000;

/** The bytes (and UTF-16 code units) of JSON's structure, for scanners of JSON text. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const COMMA = 0x2c;
export const OPEN_BRACKET = 0x5b;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACKET = 0x5d;
export const CLOSE_BRACE = 0x7d;

/** Up to this many keys an object's keys are compared in a list; a larger object gets a Set. */
const LISTED_KEYS = 16;

/**
 * Scratch space of jsonShapeProblem, kept between calls (it is synchronous and never re-entered)
 * so that checking a message allocates no Set or array per object: per open container, where its
 * keys start in `keyList` (-1 for an array); the keys of the open objects, folded to lower case;
 * and a Set for each open object with more than LISTED_KEYS keys (so a huge object stays linear).
 */
const keyStart: number[] = [];
const keyList: Array<string | undefined> = [];
const largeObjects: Array<Set<string> | undefined> = [];

/**
 * What is wrong with the shape of JSON text that JSON.parse accepted, or undefined: nesting deeper
 * than MAX_JSON_DEPTH, and with `keys`, a key repeated in one object, also in another case
 * (`"method"` and `"Method"`) or spelled with escapes. JSON.parse keeps the last duplicate
 * silently, so a policy and the server could read different values. One pass, no recursion;
 * `text` must be JSON that JSON.parse accepted.
 */
export function jsonShapeProblem(text: string, keys: boolean): string | undefined {
  let depth = 0;
  let keyCount = 0;
  let keysHigh = 0;
  try {
    let expectKey = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        let end = i + 1;
        let escaped = false;
        for (let cc = text.charCodeAt(end); cc !== QUOTE && end < text.length; cc = text.charCodeAt(end)) {
          if (cc === BACKSLASH) {
            escaped = true;
            end++;
          }
          end++;
        }
        if (expectKey && keys) {
          const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
          const folded = key.toLowerCase();
          const first = keyStart[depth - 1] as number;
          const large = largeObjects[depth - 1];
          let seen = large ? large.has(folded) : false;
          for (let k = first; !large && k < keyCount; k++) if (keyList[k] === folded) seen = true;
          if (seen) return `the key "${key}" appears twice in one object (keys are compared ignoring case)`;
          if (large) large.add(folded);
          else if (keyCount - first < LISTED_KEYS) {
            keyList[keyCount++] = folded;
            if (keyCount > keysHigh) keysHigh = keyCount;
          } else {
            largeObjects[depth - 1] = new Set(keyList.slice(first, keyCount) as string[]).add(folded);
          }
        }
        expectKey = false;
        i = end;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth >= MAX_JSON_DEPTH) return `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
        keyStart[depth++] = c === OPEN_BRACE ? keyCount : -1;
        expectKey = c === OPEN_BRACE;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        const first = keyStart[depth] as number;
        if (first !== -1) {
          keyCount = first;
          largeObjects[depth] = undefined;
        }
        expectKey = false;
      } else if (c === COMMA) {
        expectKey = depth > 0 && keyStart[depth - 1] !== -1;
      }
    }
    return undefined;
  } finally {
    // No key of this text stays referenced (a slice can hold the whole text).
    keyList.fill(undefined, 0, keysHigh);
    largeObjects.fill(undefined, 0, depth);
  }
}
