/** The egress proxy program, run as a real Node process on the host against a local target. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/ports.js';
import { EGRESS_PROXY_JS } from './proxy-source.js';

let proxy: ChildProcess;
let proxyPort: number;
let target: Server;
let targetPort: number;
let otherPort: number;
let scriptDir: string;

/** The status code the proxy answers a CONNECT with. */
function connectStatus(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxyPort, '127.0.0.1', () =>
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
  proxy = spawn(process.execPath, [script], {
    env: {
      MOAT_EGRESS_CONFIG: JSON.stringify({
        allowHosts: ['127.0.0.1', '.localhost'],
        allowPorts: [targetPort, otherPort],
        port: proxyPort,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => proxy.stdout!.once('data', () => resolve()));
});

afterAll(() => {
  proxy.kill('SIGTERM');
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
    expect(denied.body).toContain('127.0.0.1:1 is not allowed by the permission profile');
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
