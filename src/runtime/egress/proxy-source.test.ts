/** The egress proxy program, run as a real Node process on the host against a local target. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/ports.js';
import { EGRESS_PROXY_JS, type EgressConfig } from './proxy-source.js';

let proxy: ChildProcess;
let proxyPort: number;
/** The same program with gateways blocked (isolation) and allowed (--allow-docker-gateway). */
let blocking: { process: ChildProcess; port: number };
let allowing: { process: ChildProcess; port: number };
let target: Server;
let targetPort: number;
let otherPort: number;
let scriptDir: string;

/** The status code the proxy answers a CONNECT with. */
function connectStatus(host: string, port: number, via = proxyPort): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(via, '127.0.0.1', () =>
      socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`),
    );
    let data = '';
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (status) {
        socket.destroy();
        resolve(status[1]!);
      }
    });
    socket.once('error', reject);
  });
}

function proxiedGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: proxyPort, path: url, headers: { host: new URL(url).host } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  target = createHttpServer((req, res) => res.end(`target saw ${req.url}`));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  targetPort = (target.address() as AddressInfo).port;
  otherPort = await freePort();
  proxyPort = await freePort();
  scriptDir = mkdtempSync(join(tmpdir(), 'moat-egress-'));
  const script = join(scriptDir, 'egress.mjs');
  writeFileSync(script, EGRESS_PROXY_JS);
  proxy = await startProxy(script, {
    allowHosts: ['127.0.0.1', '.localhost'],
    allowPorts: [targetPort, otherPort],
    gateway: 'profile',
    listen: proxyPort,
  });
  blocking = { port: await freePort(), process: proxy };
  blocking.process = await startProxy(script, {
    allowAll: true,
    gateway: 'block',
    gatewayAddresses: ['192.0.2.7', '2001:db8::7'],
    listen: blocking.port,
  });
  allowing = { port: await freePort(), process: proxy };
  allowing.process = await startProxy(script, {
    allowHosts: ['example.invalid'],
    allowPorts: [443],
    gateway: 'allow',
    gatewayAddresses: ['127.0.0.1'],
    listen: allowing.port,
  });
});

/** Runs the egress role on the host (listening on a loopback port) until its first output line. */
async function startProxy(script: string, config: Partial<EgressConfig>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [script], {
    env: {
      MOAT_EGRESS_CONFIG: JSON.stringify({
        role: 'egress',
        allowAll: false,
        allowHosts: [],
        allowPorts: [],
        gatewayAddresses: [],
        ...config,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return child;
}

afterAll(() => {
  for (const child of [proxy, blocking.process, allowing.process]) child.kill('SIGTERM');
  target.close();
  rmSync(scriptDir, { recursive: true, force: true });
});

describe('egress proxy', () => {
  it('tunnels CONNECT to an allowed host and port', async () => {
    expect(await connectStatus('127.0.0.1', targetPort)).toBe('200');
  });

  it('forwards plain HTTP to an allowed destination', async () => {
    expect(await proxiedGet(`http://127.0.0.1:${targetPort}/path?q=1`)).toEqual({
      status: 200,
      body: 'target saw /path?q=1',
    });
  });

  it('refuses hosts and ports outside the allowlist with 403', async () => {
    expect(await connectStatus('127.0.0.1', 1)).toBe('403');
    expect(await connectStatus('127.0.0.2', targetPort)).toBe('403');
    expect(await connectStatus('evil-localhost', targetPort)).toBe('403');
    expect(await connectStatus('localhost.evil.test', targetPort)).toBe('403');
    const denied = await proxiedGet(`http://127.0.0.1:1/`);
    expect(denied.status).toBe(403);
    expect(denied.body).toContain('127.0.0.1:1 is refused: not allowed by the permission profile');
  });

  it('matches a .domain entry for the domain and its subdomains (allowed, so not 403)', async () => {
    // The decision passes; the connection then succeeds or fails on its own (502), never 403.
    expect(await connectStatus('localhost', targetPort)).not.toBe('403');
    expect(await connectStatus('a.b.localhost', targetPort)).not.toBe('403');
    expect(await connectStatus('LOCALHOST', targetPort)).not.toBe('403');
  });

  it('reports an unreachable allowed destination as 502', async () => {
    expect(await connectStatus('127.0.0.1', otherPort)).toBe('502');
  });
});

describe('egress proxy gateway rules', () => {
  it('refuses gateway addresses in every spelling, even when the profile allows all', async () => {
    for (const host of [
      '192.0.2.7',
      '3221225991',
      '0300.0.2.7',
      '192.0.519',
      '0xc0000207',
      '[::ffff:192.0.2.7]',
      '[::ffff:c000:207]',
    ])
      expect(`${host}: ${await connectStatus(host, targetPort, blocking.port)}`).toBe(`${host}: 403`);
    expect(await connectStatus('[2001:db8:0::7]', 443, blocking.port)).toBe('403');
  });

  it('refuses the host-gateway names and loopback (the proxy itself), by name or by resolved address', async () => {
    for (const host of [
      'host.docker.internal',
      'host.containers.internal',
      'localhost',
      '127.0.0.1',
      '2130706433',
      '[::1]',
    ])
      expect(`${host}: ${await connectStatus(host, targetPort, blocking.port)}`).toBe(`${host}: 403`);
  });

  it('lets other destinations through under insecure_allow_all (unreachable ones fail with 502, not 403)', async () => {
    expect(await connectStatus('192.0.2.8', 9, blocking.port)).not.toBe('403');
  });

  it('--allow-docker-gateway: a gateway on any port, other hosts only as the profile allows', async () => {
    expect(await connectStatus('127.0.0.1', targetPort, allowing.port)).toBe('200');
    expect(await connectStatus('0x7f000001', targetPort, allowing.port)).toBe('200');
    expect(await connectStatus('127.0.0.2', targetPort, allowing.port)).toBe('403');
  });
});
