/** Socket discovery against the test run's real Podman API service. */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { connectRuntime } from '../../../src/runtime/connect.js';
import { podmanSocket } from '../../support/podman.js';

const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
});

/** A temp dir removed when the current test ends. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'moat-sock-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function listen(server: Server, where: string | number): Promise<Server> {
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (typeof where === 'string') server.listen(where, () => resolve(server));
    else server.listen(where, '127.0.0.1', () => resolve(server));
  });
}

describe('connectRuntime', () => {
  it('uses MOAT_RUNTIME_SOCKET (a path or a unix:// URL) and recognises Podman', async () => {
    for (const value of [podmanSocket(), `unix://${podmanSocket()}`]) {
      const runtime = await connectRuntime({ MOAT_RUNTIME_SOCKET: value });
      expect(runtime.info).toMatchObject({ endpoint: `unix://${podmanSocket()}`, flavor: 'podman' });
      expect(runtime.info.version).toMatch(/^\d+\.\d+/);
    }
  });

  it('uses DOCKER_HOST with unix:// and tcp://', async () => {
    const viaUnix = await connectRuntime({ DOCKER_HOST: `unix://${podmanSocket()}` });
    expect(viaUnix.info.flavor).toBe('podman');

    // A plain TCP endpoint in front of the same API (a byte-for-byte relay to the socket).
    const relay = await listen(
      createServer((client) => {
        const upstream = connect(podmanSocket());
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      }),
      0,
    );
    const port = (relay.address() as { port: number }).port;
    const viaTcp = await connectRuntime({ DOCKER_HOST: `tcp://127.0.0.1:${port}` });
    expect(viaTcp.info).toMatchObject({ endpoint: `tcp://127.0.0.1:${port}`, flavor: 'podman' });
    expect(Array.isArray(await viaTcp.listContainers())).toBe(true);
  });

  it('an explicit MOAT_RUNTIME_SOCKET that does not answer is the only place tried', async () => {
    const missing = join(tempDir(), 'none.sock');
    const error = await connectRuntime({
      MOAT_RUNTIME_SOCKET: missing,
      DOCKER_HOST: `unix://${podmanSocket()}`,
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ kind: 'runtime', exitCode: 1 });
    const message = (error as Error).message;
    expect(message).toContain(`MOAT_RUNTIME_SOCKET: unix://${missing} (no socket at this path)`);
    const tried = message.split('\n').filter((line) => line.startsWith('  '));
    expect(tried).toHaveLength(1);
  });

  it('when nothing answers, lists every place tried with the reason and how to fix it', async () => {
    const dir = tempDir();
    // A socket that accepts and hangs up at once: not an Engine API.
    const hangUp = join(dir, 'hangup.sock');
    await listen(
      createServer((socket) => socket.destroy()),
      hangUp,
    );
    // A TCP port nobody listens on: bind and release it.
    const closed = await listen(createServer(), 0);
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));

    const error = await connectRuntime({}, [
      { origin: 'rootful Podman', endpoint: `unix://${join(dir, 'missing.sock')}`, explicit: false },
      { origin: 'Docker', endpoint: `unix://${hangUp}`, explicit: false },
      { origin: 'DOCKER_HOST', endpoint: `tcp://127.0.0.1:${closedPort}`, explicit: true },
    ]).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ kind: 'runtime' });
    const message = (error as Error).message;
    expect(message).toMatch(/^no container runtime is reachable\. Tried:/);
    expect(message).toContain(`rootful Podman: unix://${join(dir, 'missing.sock')} (no socket at this path)`);
    expect(message).toMatch(new RegExp(`Docker: unix://${hangUp} \\(.+\\)`));
    expect(message).toMatch(new RegExp(`DOCKER_HOST: tcp://127.0.0.1:${closedPort} \\(.*ECONNREFUSED.*\\)`));
    expect(message).toContain('podman system service');
    expect(message).toContain('MOAT_RUNTIME_SOCKET');
  });
});
