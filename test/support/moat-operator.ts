/**
 * Runs the operator for integration tests the way it runs in a cluster: under its own
 * ServiceAccount token, bound to the rules shipped in deploy/rbac (the namespaced Role for the
 * test namespace, and the leader-election Role), so a verb missing there fails the test.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { startOperator, type Operator } from '../../src/operator/main.js';
import type { KubeObject } from '../../src/operator/controller/resource.js';
import { installCrds } from './operator-crds.js';
import { kubeCluster, kubeConfig } from './kube-cluster.js';
import { adminClient, captureLog, createNamespace, type PolicyRule } from './kube-controller.js';

const RBAC_DIR = fileURLToPath(new URL('../../deploy/rbac/', import.meta.url));

export const TEST_PROXY_IMAGE = 'example.test/moat:test';

/** The `rules` of the first object in a shipped RBAC file. */
export function shippedRules(file: string): PolicyRule[] {
  const [first] = loadAllYaml(readFileSync(`${RBAC_DIR}${file}`, 'utf8')) as { rules: PolicyRule[] }[];
  if (!first?.rules) throw new Error(`${file} has no rules`);
  return first.rules;
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
    [name, shippedRules('namespaced/role.yaml')],
    [`${name}-leader-election`, shippedRules('leader-election-role.yaml')],
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
  const request = await admin.create<{ status?: { token?: string } } & KubeObject>(
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
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
