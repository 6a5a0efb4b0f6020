/** Socket discovery against the test run's real Podman API service. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
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

function listen(server: Server, where: string | number, host = '127.0.0.1'): Promise<Server> {
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (typeof where === 'string') server.listen(where, () => resolve(server));
    else server.listen(where, host, () => resolve(server));
  });
}

/** A plain TCP endpoint in front of the test Podman API (a byte-for-byte relay to the socket). */
function relayToPodman(): Server {
  return createServer((client) => {
    const upstream = connect(podmanSocket());
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
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

    const relay = await listen(relayToPodman(), 0);
    const port = (relay.address() as { port: number }).port;
    const viaTcp = await connectRuntime({ DOCKER_HOST: `tcp://127.0.0.1:${port}` });
    expect(viaTcp.info).toMatchObject({ endpoint: `tcp://127.0.0.1:${port}`, flavor: 'podman' });
    expect(Array.isArray(await viaTcp.listContainers())).toBe(true);

    // An IPv6 literal: the URL's brackets are not part of the address dialled.
    const relay6 = await listen(relayToPodman(), 0, '::1');
    const port6 = (relay6.address() as { port: number }).port;
    const viaIpv6 = await connectRuntime({ DOCKER_HOST: `tcp://[::1]:${port6}` });
    expect(viaIpv6.info).toMatchObject({ endpoint: `tcp://[::1]:${port6}`, flavor: 'podman' });
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

  it('uses DOCKER_HOST over TLS with the client certificate from DOCKER_CERT_PATH', async () => {
    const certs = tempDir();
    const openssl = (...args: string[]): void =>
      void execFileSync('openssl', args, { cwd: certs, stdio: 'ignore' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=moat-test-ca',
      '-keyout',
      'ca-key.pem',
      '-out',
      'ca.pem',
    );
    writeFileSync(join(certs, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    for (const [name, ext] of [
      ['server', ['-extfile', 'server.ext']],
      ['cert', []],
    ] as const) {
      const key = name === 'server' ? 'server-key.pem' : 'key.pem';
      openssl(
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        `/CN=${name}`,
        '-keyout',
        key,
        '-out',
        `${name}.csr`,
      );
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca-key.pem',
        '-CAcreateserial',
        '-days',
        '1',
        '-out',
        `${name === 'server' ? 'server' : 'cert'}.pem`,
        ...ext,
      );
    }
    const read = (file: string): Buffer => readFileSync(join(certs, file));
    // A TLS endpoint that requires a client certificate signed by the CA, relaying to the API socket.
    const relay = await listen(
      createTlsServer(
        {
          key: read('server-key.pem'),
          cert: read('server.pem'),
          ca: read('ca.pem'),
          requestCert: true,
          rejectUnauthorized: true,
        },
        (client) => {
          const upstream = connect(podmanSocket());
          client.pipe(upstream).pipe(client);
          client.on('error', () => upstream.destroy());
          upstream.on('error', () => client.destroy());
        },
      ),
      0,
    );
    const port = (relay.address() as { port: number }).port;
    const env = { DOCKER_HOST: `tcp://127.0.0.1:${port}`, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs };
    const runtime = await connectRuntime(env);
    expect(runtime.info.flavor).toBe('podman');
    expect(Array.isArray(await runtime.listContainers())).toBe(true);

    // Without TLS the same endpoint does not answer the Engine API.
    await expect(connectRuntime({ DOCKER_HOST: `tcp://127.0.0.1:${port}` })).rejects.toMatchObject({
      kind: 'runtime',
      message: expect.stringContaining(`DOCKER_HOST: tcp://127.0.0.1:${port} (`),
    });
  });
});
