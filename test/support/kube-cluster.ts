/**
 * A real Kubernetes API server for tests: etcd + kube-apiserver (built once per machine by
 * scripts/kube-tools.sh) on loopback ports, TLS from a throwaway CA made with openssl, a static admin
 * token in group system:masters, RBAC authorization and service-account signing keys. Started once
 * per run by the global setup; tests read where it is from env vars through `kubeCluster()`.
 * No controller-manager, scheduler or kubelet runs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { freePort } from './ports.js';
import { makeCertificates } from './redis.js';

export const KUBE_VERSION = 'v1.34.4';
export const ETCD_VERSION = 'v3.6.4';

export interface KubeCluster {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM file of the CA that signed the server certificate. */
  caFile: string;
  /** Bearer token of a user in group system:masters. */
  adminToken: string;
}

const ENV = {
  url: 'MOAT_TEST_KUBE_URL',
  ca: 'MOAT_TEST_KUBE_CA',
  token: 'MOAT_TEST_KUBE_TOKEN',
  error: 'MOAT_TEST_KUBE_ERROR',
};

/** The cache directory scripts/kube-tools.sh builds into. */
export function kubeToolsDir(): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(cache, 'moat-test', 'kube', `${KUBE_VERSION}-etcd-${ETCD_VERSION}`);
}

/** For tests: the cluster the global setup started, or a failure saying why there is none. */
export function kubeCluster(): KubeCluster {
  const { [ENV.url]: url, [ENV.ca]: caFile, [ENV.token]: adminToken } = process.env;
  if (url && caFile && adminToken) return { url, caFile, adminToken };
  throw new Error(
    `no test Kubernetes API server: ${process.env[ENV.error] ?? 'the global setup did not start one'}`,
  );
}

/** A client-node config for the test cluster, as the admin or as the holder of `token`. */
export function kubeConfig(token?: string): KubeConfig {
  const { url, caFile, adminToken } = kubeCluster();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'moat-test', server: url, caFile, skipTLSVerify: false }],
    users: [{ name: 'moat-test-user', token: token ?? adminToken }],
    contexts: [{ name: 'moat-test', cluster: 'moat-test', user: 'moat-test-user' }],
    currentContext: 'moat-test',
  });
  return kc;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** Serving certificate (127.0.0.1, localhost) from a throwaway CA, and the service-account key pair. */
function makePki(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const certs = makeCertificates(dir);
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  return certs;
}

function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const kill = setTimeout(() => child.pid !== undefined && process.kill(child.pid, 'SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    process.kill(child.pid, 'SIGTERM');
  });
}

/** One GET; resolves with the status and body. `ca` trusts the test CA for https URLs. */
function get(
  url: string,
  headers: Record<string, string>,
  ca?: Buffer,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https:') ? httpsRequest : httpRequest)(
      url,
      { headers, ca, timeout: 2_000 },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Polls `url` until it answers 200, the process exits, or the bound passes. */
async function waitOk(
  url: string,
  child: ChildProcess,
  log: () => string,
  timeoutMs: number,
  headers: Record<string, string> = {},
  ca?: Buffer,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${child.spawnfile} exited (${child.exitCode}):\n${log()}`);
    try {
      const res = await get(url, headers, ca);
      if (res.status === 200) return;
      last = `${res.status} ${res.body}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} not ready within ${timeoutMs} ms (${last}):\n${log().slice(-4000)}`);
}

function capture(child: ChildProcess): () => string {
  let out = '';
  const add = (d: Buffer): void => {
    out = (out + d.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return () => out;
}

/**
 * For the global setup: starts etcd and kube-apiserver and publishes them through env vars. When the
 * binaries are missing, records why instead, so the tests that need a cluster fail with that reason.
 */
export async function startKubeCluster(): Promise<() => Promise<void>> {
  const bin = kubeToolsDir();
  const etcdBin = join(bin, 'etcd');
  const apiserverBin = join(bin, 'kube-apiserver');
  if (!existsSync(etcdBin) || !existsSync(apiserverBin)) {
    process.env[ENV.error] =
      `${bin} has no etcd/kube-apiserver; build them with \`bash scripts/kube-tools.sh\``;
    return () => Promise.resolve();
  }
  const dir = mkdtempSync(join(tmpdir(), 'moat-kube-'));
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const child of children.reverse()) await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const certs = makePki(dir);
    const adminToken = randomBytes(24).toString('hex');
    writeFileSync(
      join(dir, 'tokens.csv'),
      `${adminToken},moat-test-admin,moat-test-admin,"system:masters"\n`,
      { mode: 0o600 },
    );
    mkdirSync(join(dir, 'etcd'), { mode: 0o700 });

    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const etcd = spawn(
      etcdBin,
      [
        '--name=moat-test',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=moat-test=${peerUrl}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(etcd);
    const etcdLog = capture(etcd);
    await waitOk(`${etcdUrl}/health`, etcd, etcdLog, 30_000);

    const apiserver = spawn(
      apiserverBin,
      [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${dir}`,
        `--tls-cert-file=${certs.certFile}`,
        `--tls-private-key-file=${certs.keyFile}`,
        `--client-ca-file=${certs.caFile}`,
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${join(dir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--endpoint-reconciler-type=none',
        '--profiling=false',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(apiserver);
    const apiLog = capture(apiserver);
    const url = `https://127.0.0.1:${apiPort}`;
    await waitOk(
      `${url}/readyz`,
      apiserver,
      apiLog,
      90_000,
      { authorization: `Bearer ${adminToken}` },
      readFileSync(certs.caFile),
    );
    etcd.stdout?.resume();
    apiserver.stdout?.resume();
    process.env[ENV.url] = url;
    process.env[ENV.ca] = certs.caFile;
    process.env[ENV.token] = adminToken;
    return stop;
  } catch (err) {
    await stop();
    throw err;
  }
}
