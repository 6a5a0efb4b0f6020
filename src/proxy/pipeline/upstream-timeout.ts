/** The reason an exchange aborted when the backend took longer than `upstream_timeout` (HTTP and stdio backends). */
export class UpstreamTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the MCP backend did not answer within ${ms} ms (upstream timeout)`);
    this.name = 'UpstreamTimeout';
  }
}

/** The JSON-RPC error message of a timed-out exchange, the same for HTTP and stdio backends. */
export function upstreamTimeoutMessage(ms: number): string {
  return `Upstream timeout: ${new UpstreamTimeout(ms).message}`;
}
