/**
 * Helpers for the controller-machinery tests on the real API server: namespaces, a ServiceAccount
 * with a given Role (to run a controller under real RBAC), polling with a bound, a log sink.
 *
 * Run as a program (`node --import tsx test/support/kube-controller.ts`), this file is a second
 * controller process for the leader-election test: it leads ConfigMaps in MOAT_TEST_NAMESPACE under
 * the Lease MOAT_TEST_LEASE with identity MOAT_TEST_IDENTITY, until it is killed.
 */
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino, type Logger } from 'pino';
import { KubeClient } from '../../src/operator/controller/client.js';
import { CONFIG_MAPS, type KubeObject } from '../../src/operator/controller/resource.js';
import { runController } from '../../src/operator/controller/run.js';
import { kubeConfig } from './kube-cluster.js';

export const adminClient = (): KubeClient => new KubeClient(kubeConfig());

export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  await adminClient().create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  return name;
}

/** Polls `check` until it stops throwing; rethrows its last failure after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/** A logger whose JSON records the test can read back. */
export function captureLog(): { log: Logger; lines: () => Record<string, unknown>[] } {
  const records: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      records.push(chunk.toString('utf8'));
      done();
    },
  });
  return {
    log: pino({ level: 'debug', base: undefined }, sink),
    lines: () => records.map((r) => JSON.parse(r) as Record<string, unknown>),
  };
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** A ServiceAccount bound to a Role with exactly `rules`, and a short-lived token for it. */
export async function serviceAccountToken(
  namespace: string,
  name: string,
  rules: PolicyRule[],
): Promise<string> {
  const admin = adminClient();
  await admin.create(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name },
  });
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name },
    rules,
  });
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
  const request = await admin.create<{ status?: { token?: string } } & KubeObject>(
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
  );
  const token = request.status?.token;
  if (!token) throw new Error('the API server returned no ServiceAccount token');
  return token;
}

/** Short leader-election timings for tests; the Lease stores whole seconds. */
export const FAST_ELECTION = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 200 };

async function runAsChild(): Promise<void> {
  const namespace = process.env.MOAT_TEST_NAMESPACE!;
  await runController({
    name: 'child',
    kubeConfig: kubeConfig(),
    primary: CONFIG_MAPS,
    namespaces: [namespace],
    leaderElection: {
      namespace,
      leaseName: process.env.MOAT_TEST_LEASE,
      identity: process.env.MOAT_TEST_IDENTITY,
      ...FAST_ELECTION,
    },
    probes: false,
    handleSignals: true,
    log: pino({ level: 'info', base: undefined }),
    reconcile: () => Promise.resolve(),
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runAsChild();
