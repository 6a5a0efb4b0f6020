/** The bridged requests Moat answers itself, the same for every backend transport. */
import type { Identity } from '../../../mcp/identity.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import type { InputBroker } from './seam.js';
import { discoverResult } from './translate.js';

/**
 * A request the bridge answers itself: a retry the broker owns, or `server/discover` (from the
 * backend's initialize result, read through `init`); undefined: forward the request.
 */
export async function localAnswer(
  message: JsonRpcRequest,
  identity: Identity,
  broker: InputBroker | undefined,
  init: () => Promise<Record<string, unknown>>,
): Promise<JsonRpcResponse | undefined> {
  const intercepted = await broker?.intercept?.(message, identity);
  if (intercepted) return intercepted;
  if (message.method !== 'server/discover') return undefined;
  return { jsonrpc: '2.0', id: message.id, result: discoverResult(await init()) };
}
