/** The bridged requests Moat answers itself, the same for every backend transport. */
import type { Identity } from '../../mcp/identity.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../mcp/jsonrpc.js';
import type { InputBroker } from './seam.js';
import { discoverResult, removedMethodAnswer } from './translate.js';

/**
 * A retry the broker owns, a method 2026-07-28 removed (method not found), or `server/discover`
 * (from the backend's initialize result, read through `init`); undefined: forward the request.
 */
export async function localAnswer(
  message: JsonRpcRequest,
  identity: Identity,
  broker: InputBroker | undefined,
  init: () => Promise<Record<string, unknown>>,
): Promise<JsonRpcResponse | undefined> {
  const intercepted = await broker?.intercept?.(message, identity);
  if (intercepted) return intercepted;
  const removed = removedMethodAnswer(message);
  if (removed) return removed;
  if (message.method !== 'server/discover') return undefined;
  return { jsonrpc: '2.0', id: message.id, result: discoverResult(await init()) };
}
