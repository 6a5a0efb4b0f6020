/** The request's JSON-RPC message, parsed once per request however many parts ask for it. */
import type { EdgeRequest, JsonRpcMessage } from '../types.js';
import { annotate, parseJsonRpc } from './jsonrpc.js';

const parsed = new WeakMap<EdgeRequest, Promise<JsonRpcMessage>>();

/** Reads and parses the body (400 on bad JSON-RPC) and records method/target/id in the annotations. */
export function readMessage(request: EdgeRequest): Promise<JsonRpcMessage> {
  let message = parsed.get(request);
  if (!message) {
    message = request.readBody().then((body) => {
      const m = parseJsonRpc(body);
      annotate(request.annotations, m);
      return m;
    });
    parsed.set(request, message);
  }
  return message;
}
