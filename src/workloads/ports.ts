/** Host ports for the proxy: pick a free one, or check that a requested one can be bound. */
import { createServer } from 'node:net';
import { errorMessage, runtimeError } from '../util/errors.js';

/** Binds `host:port` briefly; resolves with the bound port (a free one when `port` is 0). */
function bind(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * The port the proxy will listen on: `requested` when it is free, a free port when it is 0.
 * A busy requested port is an error saying what to do (`remedy`; by default: the flag).
 */
export async function resolveProxyPort(
  host: string,
  requested: number,
  remedy = 'choose another --proxy-port or omit it to pick a free one',
): Promise<number> {
  try {
    return await bind(host, requested);
  } catch (err) {
    if (requested === 0) throw runtimeError(`cannot find a free port on ${host}: ${errorMessage(err)}`);
    throw runtimeError(
      `requested proxy port ${requested} on ${host} is not available (${errorMessage(err)}); ${remedy}`,
    );
  }
}
