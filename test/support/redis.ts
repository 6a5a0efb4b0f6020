/**
 * Real redis-server instances for session store tests: plain, with a password, or TLS-only
 * (`port 0` + `tls-port`, certificates from a throwaway CA made with openssl). Each test file
 * starts its own on a free loopback port and stops it by PID.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface RedisTls {
  /** CA that signed the server certificate. */
  caFile: string;
  /** A different CA, for certificate failure tests. */
  otherCaFile: string;
}

export interface RedisServer {
  port: number;
  /** `127.0.0.1:<port>` as the RunConfig's session_redis.address wants it. */
  address: string;
  password?: string;
  tls?: RedisTls;
  pid: number;
  stop(): Promise<void>;
}

const INSTALL_HINT = 'install it with `apt-get install redis-server openssl`';

/** For the global setup: fails the run at once when redis-server or openssl is missing. */
export function checkRedisTools(): () => Promise<void> {
  for (const [tool, arg] of [
    ['redis-server', '--version'],
    ['openssl', 'version'],
  ] as const) {
    try {
      execFileSync(tool, [arg], { stdio: 'ignore' });
    } catch {
      throw new Error(`${tool} is needed by the session store tests; ${INSTALL_HINT}`);
    }
  }
  return () => Promise.resolve();
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA, a server certificate for 127.0.0.1/localhost signed by it, and an unrelated CA. */
export function makeCertificates(dir: string): RedisTls & { certFile: string; keyFile: string } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=moat-test-ca',
  ]);
  openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'other.key',
    '-out',
    'other.crt',
    '-days',
    '2',
    '-subj',
    '/CN=other-ca',
  ]);
  openssl(dir, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  ]);
  return {
    caFile: join(dir, 'ca.crt'),
    otherCaFile: join(dir, 'other.crt'),
    certFile: join(dir, 'server.crt'),
    keyFile: join(dir, 'server.key'),
  };
}

function waitReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 15_000);
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}):\n${output}`));
    });
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.pid === undefined) return resolve();
    child.once('exit', () => resolve());
    process.kill(child.pid, 'SIGTERM');
  });
}

export async function startRedis(options: { password?: string; tls?: boolean } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'moat-redis-'));
  const certs = options.tls ? makeCertificates(dir) : undefined;
  let lastError: unknown;
  // A free port can be taken between probing and binding; try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const lines = [
      'bind 127.0.0.1',
      'save ""',
      'appendonly no',
      `dir ${dir}`,
      'loglevel notice',
      'databases 4',
    ];
    if (certs) {
      lines.push(
        'port 0',
        `tls-port ${port}`,
        `tls-cert-file ${certs.certFile}`,
        `tls-key-file ${certs.keyFile}`,
        `tls-ca-cert-file ${certs.caFile}`,
        'tls-auth-clients no',
      );
    } else {
      lines.push(`port ${port}`);
    }
    if (options.password) lines.push(`requirepass ${options.password}`);
    const confFile = join(dir, 'redis.conf');
    writeFileSync(confFile, `${lines.join('\n')}\n`, { mode: 0o600 });
    const child = spawn('redis-server', [confFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await waitReady(child);
    } catch (err) {
      lastError = err;
      await stopProcess(child);
      continue;
    }
    child.stdout?.resume();
    child.stderr?.resume();
    return {
      port,
      address: `127.0.0.1:${port}`,
      ...(options.password ? { password: options.password } : {}),
      ...(certs ? { tls: { caFile: certs.caFile, otherCaFile: certs.otherCaFile } } : {}),
      pid: child.pid as number,
      stop: async () => {
        await stopProcess(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}
