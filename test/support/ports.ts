/** Loopback ports for tests. */
import { createServer, type AddressInfo } from 'node:net';

/**
 * A port nobody listens on right now (bound on 127.0.0.1, read back and released): for a port
 * that must be named before its server starts, or stay the same across two runs.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
