/** The request's JSON-RPC message, parsed once per request however many parts ask for it. */
import type { EdgeRequest } from '../types.js';
import { recordMessage } from '../../mcp/exchange.js';
import { InvalidMessage, type JsonRpcMessage, parseJsonRpc } from '../../mcp/jsonrpc.js';
import { ProxyRejection } from './errors.js';

/** The message once parsed, or the promise of it while its body is being read. */
const parsed = new WeakMap<EdgeRequest, JsonRpcMessage | Promise<JsonRpcMessage>>();

/** Reads and parses the body (400 on bad JSON-RPC) and records method/target/id in the annotations. */
export function readMessage(request: EdgeRequest): Promise<JsonRpcMessage> {
  const known = parsed.get(request);
  if (known) return known instanceof Promise ? known : Promise.resolve(known);
  const message = request.readBody().then((body) => messageIn(request, body));
  parsed.set(request, message);
  return message;
}

/**
 * The message of `body`, the bytes `request.readBody()` resolved with: parsed here at once (a
 * caller holding the body saves a promise and a tick), or the one parsed before.
 */
export function messageIn(request: EdgeRequest, body: Buffer): JsonRpcMessage {
  const known = parsed.get(request);
  if (known && !(known instanceof Promise)) return known;
  let m: JsonRpcMessage;
  try {
    m = parseJsonRpc(body);
  } catch (err) {
    if (err instanceof InvalidMessage) throw new ProxyRejection(400, err.error, { id: err.id });
    throw err;
  }
  recordMessage(request.annotations, m);
  parsed.set(request, m);
  return m;
}
