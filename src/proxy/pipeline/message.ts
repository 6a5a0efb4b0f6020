/** The request's JSON-RPC message, parsed once per request however many parts ask for it. */
import type { EdgeRequest } from '../types.js';
import { recordMessage } from '../../mcp/exchange.js';
import { InvalidMessage, type JsonRpcMessage, parseJsonRpc } from '../../mcp/jsonrpc.js';
import { ProxyRejection } from './errors.js';

const parsed = new WeakMap<EdgeRequest, Promise<JsonRpcMessage>>();

/** Reads and parses the body (400 on bad JSON-RPC) and records method/target/id in the annotations. */
export function readMessage(request: EdgeRequest): Promise<JsonRpcMessage> {
  let message = parsed.get(request);
  if (!message) {
    message = request.readBody().then((body) => {
      let m: JsonRpcMessage;
      try {
        m = parseJsonRpc(body);
      } catch (err) {
        if (err instanceof InvalidMessage) throw new ProxyRejection(400, err.error, { id: err.id });
        throw err;
      }
      recordMessage(request.annotations, m);
      return m;
    });
    parsed.set(request, message);
  }
  return message;
}
