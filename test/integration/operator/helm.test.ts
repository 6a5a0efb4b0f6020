/**
 * The Helm chart (deploy/helm/moat-operator) with the real helm (scripts/helm.sh) and the real API
 * server: it lints, renders with its defaults and with watched namespaces, refuses bad values with
 * a message naming the value, its output is accepted by a server-side dry-run apply, the plain
 * manifests are its current rendering and apply as shipped, a real `helm install`/`upgrade`/
 * `uninstall` works, the docs list every value, and the real `moat operator` binary, run with the
 * Deployment's own args as the chart's ServiceAccount under the chart's RBAC, reconciles a proxy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpMethod, PatchStrategy } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { packageVersion } from '../../../src/cli/version.js';
import { ALL_KINDS } from '../../../src/operator/crd/index.js';
import type { KubeClient } from '../../../src/operator/controller/client.js';
import {
  LEASES,
  objectPath,
  type KubeObject,
  type ResourceType,
} from '../../../src/operator/controller/resource.js';
import { DEPLOYMENTS, REMOTE_PROXIES } from '../../../src/operator/reconcilers/kinds.js';
import {
  CHART_DIR,
  PLAIN_MANIFESTS,
  helm,
  renderChart,
  renderPlainManifests,
  templateArgs,
  type RenderOptions,
} from '../../support/helm.js';
import { adminClient, createNamespace, eventually } from '../../support/kube-controller.js';
import {
  createMinimalProxy,
  operatorProcessDir,
  proxyDeployment,
  requestToken,
  spawnOperator,
  stopOperatorProcess,
  waitForReady,
  writeKubeconfig,
} from '../../support/moat-operator.js';
import { installCrds } from '../../support/operator-crds.js';
import { kubeCluster, kubeConfig } from '../../support/kube-cluster.js';

const dir = operatorProcessDir('moat-helm');

const ROLES: ResourceType = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  plural: 'roles',
  namespaced: true,
};

/** What the chart renders, by kind; a kind not listed here fails the test until it is. */
const PLURALS: Record<string, string> = {
  CustomResourceDefinition: 'customresourcedefinitions',
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Service: 'services',
  Deployment: 'deployments',
};

interface Container {
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  securityContext: Record<string, unknown>;
}
interface RenderedDeployment extends KubeObject {
  spec: {
    replicas: number;
    template: {
      spec: {
        serviceAccountName: string;
        securityContext: Record<string, unknown>;
        containers: Container[];
      };
    };
  };
}

/** The rendered documents as plain JSON (not client-node's model, which drops x-kubernetes-* keys). */
function documents(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

function render(options: RenderOptions): KubeObject[] {
  return documents(renderChart(options));
}

function typeOf(obj: KubeObject): ResourceType {
  const plural = PLURALS[obj.kind!];
  if (!plural) throw new Error(`the chart renders a ${obj.kind}, unknown to this test`);
  return { apiVersion: obj.apiVersion!, kind: obj.kind!, plural, namespaced: !!obj.metadata?.namespace };
}

/** Server-side apply of every object, as `kubectl apply --server-side [--dry-run=server]` does. */
async function apply(client: KubeClient, objects: KubeObject[], dryRun: boolean): Promise<KubeObject[]> {
  const stored: KubeObject[] = [];
  for (const obj of objects) {
    stored.push(
      await client.request<KubeObject>(
        HttpMethod.PATCH,
        objectPath(typeOf(obj), obj.metadata?.namespace, obj.metadata!.name!),
        {
          body: obj,
          contentType: PatchStrategy.ServerSideApply,
          query: { fieldManager: 'helm-test', force: true, dryRun: dryRun ? 'All' : undefined },
        },
      ),
    );
  }
  return stored;
}

const ofKind = (objects: KubeObject[], kind: string) => objects.filter((o) => o.kind === kind);
const deploymentOf = (objects: KubeObject[]) => ofKind(objects, 'Deployment')[0] as RenderedDeployment;
const containerOf = (objects: KubeObject[]) => deploymentOf(objects).spec.template.spec.containers[0]!;

describe('helm chart', () => {
  it('passes helm lint, also --strict', () => {
    for (const args of [
      ['lint', CHART_DIR],
      ['lint', '--strict', CHART_DIR],
    ]) {
      const result = helm(args);
      expect(result.status, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain('0 chart(s) failed');
      expect(result.stdout).not.toMatch(/\[(ERROR|WARNING)\]/);
    }
  });

  it('carries the package version as its version and appVersion', () => {
    const chart = readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8');
    expect(chart).toMatch(new RegExp(`^version: ${packageVersion()}$`, 'm'));
    expect(chart).toMatch(new RegExp(`^appVersion: ${packageVersion()}$`, 'm'));
  });

  it('docs/operator.md documents every value of values.yaml', () => {
    const values = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/operator.md', import.meta.url)), 'utf8');
    // Free-form Kubernetes fields are documented as a whole.
    const whole = new Set(['resources', 'podSecurityContext']);
    const leaves = (obj: Record<string, unknown>, prefix: string): string[] =>
      Object.entries(obj).flatMap(([key, value]) =>
        value &&
        typeof value === 'object' &&
        !Array.isArray(value) &&
        Object.keys(value).length > 0 &&
        !whole.has(key)
          ? leaves(value as Record<string, unknown>, `${prefix}${key}.`)
          : [`${prefix}${key}`],
      );
    const missing = leaves(values, '').filter((path) => !doc.includes(`\`${path}\``));
    expect(missing, 'values missing from the values table of docs/operator.md').toEqual([]);
  });

  it('deploy/manifests is the chart rendered with its default values', () => {
    expect(
      readFileSync(PLAIN_MANIFESTS, 'utf8') === renderPlainManifests(),
      'deploy/manifests/moat-operator.yaml is stale: run `npm run gen:manifests`',
    ).toBe(true);
  });

  it('deploy/manifests applies as shipped (its Namespace for real, then a server-side dry run of the rest)', async () => {
    const objects = documents(readFileSync(PLAIN_MANIFESTS, 'utf8'));
    const [namespace, ...rest] = objects;
    expect(namespace).toMatchObject({ kind: 'Namespace', metadata: { name: 'moat-system' } });
    await apply(adminClient(), [namespace!], false);
    const stored = await apply(adminClient(), rest, true);
    expect(stored.map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual(
      rest.map((o) => `${o.kind}/${o.metadata!.name}`),
    );
    expect(ofKind(rest, 'CustomResourceDefinition')).toHaveLength(ALL_KINDS.length);
  });

  it('renders a hardened operator watching every namespace by default, accepted by the API server', async () => {
    const namespace = await createNamespace('hdef');
    const objects = render({ release: namespace, namespace, includeCrds: true });
    expect(ofKind(objects, 'CustomResourceDefinition').map((c) => c.metadata!.name)).toContain(
      'mcpremoteproxies.moat.dev',
    );
    expect(ofKind(objects, 'ClusterRole')).toHaveLength(1);
    expect(ofKind(objects, 'ClusterRoleBinding')).toHaveLength(1);
    expect(ofKind(objects, 'Role').map((r) => r.metadata!.name)).toEqual([
      `${namespace}-moat-operator-leader-election`,
    ]);
    const deployment = deploymentOf(objects);
    expect(deployment.spec.replicas).toBe(2);
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    const container = containerOf(objects);
    expect(container.image).toBe(`mcp-moat-operator:${packageVersion()}`);
    expect(container.args).toEqual([
      'operator',
      '--probe-port=8081',
      '--leader-elect=true',
      '--log-level=info',
      `--proxy-image=mcp-moat:${packageVersion()}`,
    ]);
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.ports).toEqual([{ name: 'probes', containerPort: 8081, protocol: 'TCP' }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'probes' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'probes' });
    expect(ofKind(objects, 'Service')[0]).toMatchObject({
      metadata: { name: `${namespace}-moat-operator-metrics` },
      spec: { ports: [{ name: 'metrics', port: 8081, targetPort: 'probes' }] },
    });

    const stored = await apply(adminClient(), objects, true);
    expect(stored.map((o) => o.kind)).toEqual(objects.map((o) => o.kind));
    // A dry run stores nothing.
    await expect(
      adminClient().get(objectPath(DEPLOYMENTS, namespace, deployment.metadata!.name!)),
    ).rejects.toThrow(/404|not found/i);
  });

  it('with watchNamespaces: a Role in each, nothing cluster-wide, --namespace per namespace', async () => {
    const namespace = await createNamespace('hns');
    const watched = [await createNamespace('hnsa'), await createNamespace('hnsb')];
    const objects = render({
      release: 'moat-operator',
      namespace,
      set: [
        `watchNamespaces={${watched.join(',')}}`,
        'logLevel=debug',
        'proxyImage.repository=example.test/proxy,proxyImage.tag=v1',
      ],
    });
    expect(ofKind(objects, 'ClusterRole')).toEqual([]);
    expect(ofKind(objects, 'ClusterRoleBinding')).toEqual([]);
    const roles = ofKind(objects, 'Role') as (KubeObject & { rules: unknown[] })[];
    expect(roles.map((r) => `${r.metadata!.namespace}/${r.metadata!.name}`).sort()).toEqual(
      [`${namespace}/moat-operator-leader-election`, ...watched.map((ns) => `${ns}/moat-operator`)].sort(),
    );
    const [first, second] = roles.filter((r) => r.metadata!.name === 'moat-operator');
    expect(first!.rules).toEqual(second!.rules);
    const defaults = render({ release: 'moat-operator', namespace });
    expect(first!.rules).toEqual(
      (ofKind(defaults, 'ClusterRole')[0] as unknown as { rules: unknown[] }).rules,
    );
    const bindings = ofKind(objects, 'RoleBinding') as (KubeObject & { subjects: unknown[] })[];
    for (const binding of bindings) {
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'moat-operator', namespace }]);
    }
    expect(containerOf(objects).args).toEqual([
      'operator',
      '--probe-port=8081',
      '--leader-elect=true',
      '--log-level=debug',
      '--proxy-image=example.test/proxy:v1',
      ...watched.map((ns) => `--namespace=${ns}`),
    ]);
    await apply(adminClient(), objects, true);
  });

  it.each([
    ['logLevel=loud', "at '/logLevel': value must be one of 'trace', 'debug', 'info', 'warn', 'error'"],
    ['watchNamespace=team-a', "additional properties 'watchNamespace' not allowed"],
    ['watchNamespaces={Team_A}', "at '/watchNamespaces/0': 'Team_A' does not match pattern"],
    ['probePort=70000', "at '/probePort': maximum"],
    ['image.pullPolicy=Sometimes', "at '/image/pullPolicy': value must be one of"],
    // The value was one string before the proxy got an image of its own.
    ['proxyImage=example.test/proxy:1', "at '/proxyImage': got string, want object"],
    ['leaderElection.enabled=false', 'replicaCount: 2 replicas need leaderElection.enabled: true'],
  ])('refuses %s with a message naming the value', (set, message) => {
    const result = helm(templateArgs({ release: 'bad', namespace: 'bad', set: [set] }));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  it('installs, upgrades and uninstalls with helm on the real API server, leaving the CRDs', async () => {
    await installCrds(kubeConfig());
    const namespace = await createNamespace('hinst');
    const watched = await createNamespace('hinstw');
    const kubeconfig = join(dir, 'admin-kubeconfig');
    writeKubeconfig(kubeconfig, kubeCluster().adminToken);
    const admin = adminClient();
    const cli = (args: string[]) => {
      const result = helm([...args, '--namespace', namespace, '--kubeconfig', kubeconfig]);
      expect(result.status, result.stdout + result.stderr).toBe(0);
      return result.stdout;
    };
    const operatorArgs = async () =>
      (await admin.get<RenderedDeployment>(objectPath(DEPLOYMENTS, namespace, 'moat-operator'))).spec.template
        .spec.containers[0]!.args;

    // No kubelet runs here, so no --wait: the objects are stored, no pod starts.
    expect(cli(['install', 'moat-operator', CHART_DIR, '--set', `watchNamespaces={${watched}}`])).toContain(
      'STATUS: deployed',
    );
    expect(await operatorArgs()).toContain(`--namespace=${watched}`);
    await admin.get(objectPath(ROLES, watched, 'moat-operator'));

    cli([
      'upgrade',
      'moat-operator',
      CHART_DIR,
      '--set',
      `watchNamespaces={${watched}}`,
      '--set',
      'logLevel=debug',
    ]);
    expect(await operatorArgs()).toContain('--log-level=debug');

    cli(['uninstall', 'moat-operator']);
    await expect(admin.get(objectPath(DEPLOYMENTS, namespace, 'moat-operator'))).rejects.toThrow(/404/);
    await expect(admin.get(objectPath(ROLES, watched, 'moat-operator'))).rejects.toThrow(/404/);
    await admin.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/mcpremoteproxies.moat.dev');
  }, 120_000);

  it("its RBAC is enough: `moat operator` with the Deployment's args, as the chart's ServiceAccount, reconciles a proxy", async () => {
    await installCrds(kubeConfig());
    const namespace = await createNamespace('hrun');
    const watched = await createNamespace('hrunw');
    const objects = render({
      release: 'moat-operator',
      namespace,
      set: [`watchNamespaces={${watched}}`, 'proxyImage.repository=example.test/moat,proxyImage.tag=helm'],
    });
    const admin = adminClient();
    await apply(admin, objects, false);
    const serviceAccount = deploymentOf(objects).spec.template.spec.serviceAccountName;
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, await requestToken(namespace, serviceAccount));
    // The pod's downward-API env; spawnOperator appends a loopback probe port (the last one wins).
    const op = await spawnOperator(kubeconfig, containerOf(objects).args.slice(1), {
      POD_NAMESPACE: namespace,
      POD_NAME: 'moat-operator-helm-0',
    });
    await waitForReady(op);

    await createMinimalProxy(watched, 'helm');
    const deployment = await proxyDeployment(watched, 'helm');
    expect(JSON.stringify(deployment.spec)).toContain('"image":"example.test/moat:helm"');
    // Status through /status: no kubelet runs here, so the Deployment never becomes available.
    await eventually(async () => {
      const proxy = await admin.get<KubeObject & { status?: { phase?: string } }>(
        objectPath(REMOTE_PROXIES, watched, 'helm'),
      );
      expect(proxy.status?.phase, op.output()).toBe('Pending');
    }, 20_000);
    const lease = await admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(
      objectPath(LEASES, namespace, 'moat-mcpremoteproxy-leader'),
    );
    expect(lease.spec?.holderIdentity).toBe('moat-operator-helm-0');
    expect(op.output()).not.toMatch(/forbidden/i);

    expect(await stopOperatorProcess(op), op.output()).toBe(0);
  }, 120_000);
});
