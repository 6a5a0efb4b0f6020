/**
 * Runs the operator for integration tests the way it runs in a cluster: under its own
 * ServiceAccount token, bound to the rules shipped in deploy/manifests (rendered from the Helm
 * chart: its rules as a Role in the test namespace, and the leader-election Role), so a verb
 * missing there fails the test. Either in this process (startOperatorIn) or as the real `moat
 * operator` binary (spawnOperator).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { afterAll, expect } from 'vitest';
import { startOperator, type Operator } from '../../src/operator/main.js';
import { collectionPath, objectPath, type KubeObject } from '../../src/operator/controller/resource.js';
import { proxyObjectNames } from '../../src/operator/reconcile/index.js';
import { DEPLOYMENTS, REMOTE_PROXIES } from '../../src/operator/reconcilers/kinds.js';
import { PLAIN_MANIFESTS } from './helm.js';
import { installCrds } from './operator-crds.js';
import { kubeCluster, kubeConfig } from './kube-cluster.js';
import { adminClient, captureLog, createNamespace, eventually, type PolicyRule } from './kube-controller.js';
import { MOAT_MAIN, ensureBuilt } from './moat-cli.js';
import { freePort } from './ports.js';

export const TEST_PROXY_IMAGE = 'example.test/moat:test';

/** The `rules` of the shipped `kind` named `name` (deploy/manifests, rendered from the chart). */
export function shippedRules(kind: 'ClusterRole' | 'Role', name: string): PolicyRule[] {
  const objects = loadAllYaml(readFileSync(PLAIN_MANIFESTS, 'utf8')) as ({
    rules?: PolicyRule[];
  } & KubeObject)[];
  const found = objects.find((o) => o?.kind === kind && o.metadata?.name === name);
  if (!found?.rules) throw new Error(`deploy/manifests has no ${kind} ${name} with rules`);
  return found.rules;
}

/** A ServiceAccount in `namespace` bound to the shipped namespaced Role and leader-election Role. */
export async function operatorToken(namespace: string): Promise<string> {
  const admin = adminClient();
  const name = 'moat-operator';
  await admin.create(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name },
  });
  const roles: [string, PolicyRule[]][] = [
    // The chart puts these same rules in a Role per namespace when watchNamespaces is set.
    [name, shippedRules('ClusterRole', name)],
    [`${name}-leader-election`, shippedRules('Role', `${name}-leader-election`)],
  ];
  for (const [role, rules] of roles) {
    await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: role },
      rules,
    });
    await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: role },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    });
  }
  return requestToken(namespace, name);
}

/** An hour-long token of an existing ServiceAccount (a TokenRequest, as the kubelet would mount). */
export async function requestToken(namespace: string, serviceAccount: string): Promise<string> {
  const request = await adminClient().create<{ status?: { token?: string } } & KubeObject>(
    `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  const token = request.status?.token;
  if (!token) throw new Error('the API server returned no ServiceAccount token');
  return token;
}

export interface OperatorUnderTest {
  namespace: string;
  operator: Operator;
  /** Log records the operator wrote (for a failing test's message). */
  logLines: () => Record<string, unknown>[];
}

/** CRDs installed, a fresh namespace, and a token of the operator's ServiceAccount in it. */
export async function prepareOperatorNamespace(
  prefix: string,
): Promise<{ namespace: string; token: string }> {
  await installCrds(kubeConfig());
  const namespace = await createNamespace(prefix);
  return { namespace, token: await operatorToken(namespace) };
}

/** A kubeconfig file for `token` on the test cluster (for `moat operator` as a process). */
export function writeKubeconfig(path: string, token: string): void {
  const { url, caFile } = kubeCluster();
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority': caFile } }],
    users: [{ name: 'operator', user: { token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'operator' } }],
    'current-context': 'test',
  };
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
}

/** CRDs installed, a fresh namespace, and the operator watching it under the shipped RBAC. */
export async function startTestOperator(prefix: string): Promise<OperatorUnderTest> {
  const { namespace, token } = await prepareOperatorNamespace(prefix);
  return startOperatorIn(namespace, token);
}

/** The operator watching `namespace` as `token` (from prepareOperatorNamespace, its RBAC perhaps edited). */
export async function startOperatorIn(namespace: string, token: string): Promise<OperatorUnderTest> {
  const { log, lines } = captureLog();
  const operator = await startOperator({
    kubeConfig: kubeConfig(token),
    namespaces: [namespace],
    leaderElection: { namespace },
    probePort: 0,
    probeHost: '127.0.0.1',
    proxyImage: TEST_PROXY_IMAGE,
    log,
    version: 'test',
  });
  return { namespace, operator, logLines: lines };
}

/** Errors the operator logged (a reconcile that failed, an informer refused), for assertions. */
export function loggedErrors(lines: Record<string, unknown>[]): string[] {
  const errors = lines
    .filter((l) => (l.level as number) >= 50)
    .map((l) => `${String(l.msg)}: ${String(l.err)}`);
  return [...new Set(errors)];
}

export interface OperatorProcess {
  child: ChildProcess;
  /** The loopback port of /healthz, /readyz and /metrics. */
  port: number;
  /** Everything it wrote to stdout and stderr so far (for a failing test's message). */
  output: () => string;
  exited: Promise<number | null>;
}

const spawned: ChildProcess[] = [];

/**
 * The real `moat operator` binary with `kubeconfig`: `args` follow `operator`, then probes on a
 * free loopback port. Use operatorProcessDir in the test file, which kills leftovers afterwards.
 */
export async function spawnOperator(
  kubeconfig: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<OperatorProcess> {
  await ensureBuilt();
  const port = await freePort();
  let output = '';
  const child = spawn(
    process.execPath,
    [MOAT_MAIN, 'operator', ...args, '--probe-port', String(port), '--probe-host', '127.0.0.1'],
    { env: { ...process.env, ...env, KUBECONFIG: kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  spawned.push(child);
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, output: () => output, exited };
}

/** Waits, bounded, until the process answers /readyz with 200. */
export async function waitForReady(op: OperatorProcess, timeoutMs = 30_000): Promise<void> {
  await eventually(async () => {
    const res = await fetch(`http://127.0.0.1:${op.port}/readyz`);
    expect(res.status, op.output()).toBe(200);
  }, timeoutMs);
}

/** SIGTERM, then its exit code, or 'timeout' when it has not exited within `timeoutMs`. */
export async function stopOperatorProcess(
  op: OperatorProcess,
  timeoutMs = 20_000,
): Promise<number | null | 'timeout'> {
  process.kill(op.child.pid!, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)),
  );
  try {
    return await Promise.race([op.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A temp folder (for kubeconfigs) for a test file that spawns operators; after the file it is
 * removed and every spawned operator still running is killed by PID.
 */
export function operatorProcessDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  afterAll(() => {
    killOperatorProcesses();
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

function killOperatorProcesses(): void {
  for (const child of spawned) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid, 'SIGKILL');
    }
  }
}

/** A minimal MCPRemoteProxy `name` in `namespace`, created as the admin. */
export function createMinimalProxy(namespace: string, name: string): Promise<KubeObject> {
  return adminClient().create(collectionPath(REMOTE_PROXIES, namespace), {
    apiVersion: REMOTE_PROXIES.apiVersion,
    kind: REMOTE_PROXIES.kind,
    metadata: { name },
    spec: { remoteUrl: 'https://mcp.example.com/mcp' },
  });
}

/** The Deployment of proxy `name` once the operator has applied it (a bounded wait). */
export function proxyDeployment(namespace: string, name: string, timeoutMs = 20_000): Promise<KubeObject> {
  return eventually(
    () => adminClient().get(objectPath(DEPLOYMENTS, namespace, proxyObjectNames(name).deployment)),
    timeoutMs,
  );
}
