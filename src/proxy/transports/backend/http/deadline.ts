/**
 * The bound on one upstream exchange (`upstream_timeout`): an abort signal that fires when the
 * client goes away or when the time is up, and tells the two apart.
 */
import { reject, type ProxyRejection } from '../../../pipeline/errors.js';
import { RPC, type JsonRpcId } from '../../../../mcp/jsonrpc.js';

/** The reason an exchange aborted when the backend took too long. */
export class UpstreamTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the MCP backend did not answer within ${ms} ms (upstream timeout)`);
    this.name = 'UpstreamTimeout';
  }
}

export interface UpstreamDeadline {
  signal: AbortSignal;
  /** Ends the bound (e.g. once a long-lived stream has opened). */
  stop(): void;
}

export function upstreamDeadline(ms: number, clientGone: AbortSignal): UpstreamDeadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new UpstreamTimeout(ms)), ms);
  const onClientGone = () => controller.abort(clientGone.reason);
  clientGone.addEventListener('abort', onClientGone, { once: true });
  return {
    signal: controller.signal,
    stop: () => {
      clearTimeout(timer);
      clientGone.removeEventListener('abort', onClientGone);
    },
  };
}

/** The answer for a timed-out exchange: 504 with a JSON-RPC error. */
export function timeoutRejection(timeout: UpstreamTimeout, id: JsonRpcId | null): ProxyRejection {
  return reject(504, RPC.serverError, `Upstream timeout: ${timeout.message}`, { id });
}
