/**
 * The MCPRemoteProxy controller on the real API server, running under its own ServiceAccount with
 * the shipped RBAC: create → every object and the status, the effect of fields, rollout on update,
 * drift repair, a failed check and its recovery, and deletion through the finalizer. No kubelet
 * runs here: where readiness matters, the test writes the Deployment's status through `/status` as
 * a kubelet (through the Deployment controller) would.
 */
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../../src/config/runconfig.js';
import { isStatus } from '../../../src/operator/controller/client.js';
import {
  EVENTS,
  collectionPath,
  objectPath,
  type KubeObject,
} from '../../../src/operator/controller/resource.js';
import {
  CONDITION,
  RUNCONFIG_CHECKSUM,
  SECRETS_CHECKSUM,
  proxyObjectNames,
} from '../../../src/operator/reconcile/index.js';
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  REMOTE_PROXIES,
  SECRETS,
  SERVICE_ACCOUNTS,
  SERVICES,
} from '../../../src/operator/reconcilers/kinds.js';
import { PROXY_FINALIZER } from '../../../src/operator/reconcilers/remote-proxy.js';
import { adminClient, eventually } from '../../support/kube-controller.js';
import {
  TEST_PROXY_IMAGE,
  loggedErrors,
  startTestOperator,
  type OperatorUnderTest,
} from '../../support/moat-operator.js';
import type { Condition } from '../../../src/operator/crd/schema-parts.js';

const WAIT_MS = 20_000;
let env: OperatorUnderTest;
const admin = adminClient();

beforeAll(async () => {
  env = await startTestOperator('rp');
}, 60_000);
afterAll(async () => {
  await env?.operator.stop();
});

interface ProxyStatus {
  phase?: string;
  message?: string;
  url?: string;
  externalUrl?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}
type Container = {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  resources?: unknown;
};
interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    template: { metadata: { annotations?: Record<string, string> }; spec: { containers: Container[] } };
  };
}
interface Service extends KubeObject {
  spec: { ports: { port: number; targetPort: string }[]; sessionAffinity: string };
}

const get = <T extends KubeObject>(type: typeof DEPLOYMENTS, name: string) =>
  admin.get<T>(objectPath(type, env.namespace, name));

async function createProxy(name: string, spec: Record<string, unknown>): Promise<KubeObject> {
  return admin.create(collectionPath(REMOTE_PROXIES, env.namespace), {
    apiVersion: REMOTE_PROXIES.apiVersion,
    kind: REMOTE_PROXIES.kind,
    metadata: { name },
    spec,
  });
}

const patchProxy = (name: string, spec: Record<string, unknown>) =>
  admin.mergePatch(objectPath(REMOTE_PROXIES, env.namespace, name), { spec });

const proxyStatus = async (name: string) =>
  ((await admin.get(objectPath(REMOTE_PROXIES, env.namespace, name))).status ?? {}) as ProxyStatus;

const condition = (status: ProxyStatus, type: string) => status.conditions?.find((c) => c.type === type);

/** Waits until the proxy's status satisfies `check` (which throws while it does not). */
function statusEventually(name: string, check: (s: ProxyStatus) => void): Promise<ProxyStatus> {
  return eventually(async () => {
    const status = await proxyStatus(name);
    try {
      check(status);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\nstatus: ${JSON.stringify(status)}\nerrors: ${loggedErrors(env.logLines()).join('\n')}`,
        { cause: err },
      );
    }
    return status;
  }, WAIT_MS);
}

/** What a kubelet would report through the Deployment controller: replicas up and available. */
async function markAvailable(deployment: string, replicas = 1): Promise<void> {
  const current = await get<Deployment>(DEPLOYMENTS, deployment);
  await admin.request(HttpMethod.PUT, `${objectPath(DEPLOYMENTS, env.namespace, deployment)}/status`, {
    body: {
      ...current,
      status: {
        observedGeneration: current.metadata?.generation,
        replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        updatedReplicas: replicas,
      },
    },
  });
}

const moatContainer = (d: Deployment) => d.spec.template.spec.containers.find((c) => c.name === 'moat')!;

describe('MCPRemoteProxy: create', () => {
  it('makes the ServiceAccount, RunConfig ConfigMap, Deployment and Service, owned by the proxy, and reports Pending then Ready', async () => {
    const proxy = await createProxy('basic', { remoteUrl: 'https://mcp.example.com/mcp' });
    const names = proxyObjectNames('basic');

    // The Service is applied last in a pass: once it exists, so do the others.
    await eventually(() => get(SERVICES, names.service), WAIT_MS);
    const deployment = await get<Deployment>(DEPLOYMENTS, names.deployment);
    const [service, configMap, account] = await Promise.all([
      get<Service>(SERVICES, names.service),
      get(CONFIG_MAPS, names.configMap),
      get(SERVICE_ACCOUNTS, names.serviceAccount),
    ]);
    for (const obj of [deployment, service, configMap, account]) {
      expect(obj.metadata?.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'MCPRemoteProxy',
          name: 'basic',
          uid: proxy.metadata?.uid,
          controller: true,
        }),
      ]);
    }
    const container = moatContainer(deployment);
    expect(container.image).toBe(TEST_PROXY_IMAGE);
    expect(container.args).toEqual(['proxy', '--config', '/etc/moat/runconfig.json']);
    // The proxy launch settings (src/util/proxy-launch.ts), as a `moat run` supervisor gets them.
    expect(container.env).toEqual(
      expect.arrayContaining([
        { name: 'NODE_OPTIONS', value: '--max-semi-space-size=2' },
        { name: 'MALLOC_ARENA_MAX', value: '2' },
        { name: 'MALLOC_MMAP_THRESHOLD_', value: '32768' },
      ]),
    );
    const runConfig = runConfigSchema.parse(
      JSON.parse((configMap.data as Record<string, string>)['runconfig.json']!),
    );
    expect(runConfig.remote_url).toBe('https://mcp.example.com/mcp');
    expect(runConfig.port).toBe(8080);
    expect(service.spec.ports[0]).toMatchObject({ port: 8080, targetPort: 'http' });
    expect(service.spec.sessionAffinity).toBe('ClientIP');

    const pending = await statusEventually('basic', (s) => {
      expect(s.phase).toBe('Pending');
    });
    expect(pending.url).toBe(`http://${names.service}.${env.namespace}.svc.cluster.local:8080`);
    expect(pending.observedGeneration).toBe(1);
    expect(condition(pending, 'Ready')).toMatchObject({ status: 'False', reason: 'DeploymentNotReady' });
    expect(condition(pending, CONDITION.remoteUrl)).toMatchObject({ status: 'True' });
    expect(condition(pending, 'SessionStorageWarning')).toMatchObject({ status: 'False' });
    expect(condition(pending, 'AuthzPrimaryUpstreamProviderIgnored')).toBeUndefined();
    const stored = await admin.get(objectPath(REMOTE_PROXIES, env.namespace, 'basic'));
    expect(stored.metadata?.finalizers).toContain(PROXY_FINALIZER);

    await markAvailable(names.deployment);
    const ready = await statusEventually('basic', (s) => expect(s.phase).toBe('Ready'));
    expect(condition(ready, 'Ready')).toMatchObject({ status: 'True', reason: 'DeploymentAvailable' });
  });

  it('applies proxyPort, sessionAffinity, resources and resourceOverrides, and keeps the url right when the port changes', async () => {
    await createProxy('fields', {
      remoteUrl: 'https://mcp.example.com/mcp',
      proxyPort: 9090,
      sessionAffinity: 'None',
      resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m' } },
      resourceOverrides: {
        proxyDeployment: {
          labels: { team: 'a' },
          env: [
            { name: 'MOAT_DEBUG', value: 'true' },
            { name: 'NODE_OPTIONS', value: '--max-old-space-size=96' },
          ],
        },
        proxyService: { annotations: { 'example.test/lb': 'internal' } },
      },
    });
    const names = proxyObjectNames('fields');
    // The Service is applied last in a pass: once it exists, so do the others.
    await eventually(() => get(SERVICES, names.service), WAIT_MS);
    const deployment = await get<Deployment>(DEPLOYMENTS, names.deployment);
    const service = await get<Service>(SERVICES, names.service);
    expect(service.spec.ports[0]).toMatchObject({ port: 9090 });
    expect(service.spec.sessionAffinity).toBe('None');
    expect(service.metadata?.annotations).toMatchObject({ 'example.test/lb': 'internal' });
    expect(deployment.metadata?.labels).toMatchObject({ team: 'a' });
    const container = moatContainer(deployment);
    expect(container.resources).toEqual({
      limits: { cpu: '500m', memory: '256Mi' },
      requests: { cpu: '100m' },
    });
    expect(container.env).toContainEqual({ name: 'MOAT_DEBUG', value: 'true' });
    // The user's own NODE_OPTIONS replaces the launch settings' one; the rest stays.
    expect(container.env?.filter((e) => e.name === 'NODE_OPTIONS')).toEqual([
      { name: 'NODE_OPTIONS', value: '--max-old-space-size=96' },
    ]);
    expect(container.env).toContainEqual({ name: 'MALLOC_ARENA_MAX', value: '2' });
    await statusEventually('fields', (s) => expect(s.url).toMatch(/:9090$/));

    await patchProxy('fields', { proxyPort: 9191 });
    await statusEventually('fields', (s) => {
      expect(s.url).toMatch(/:9191$/);
      expect(s.observedGeneration).toBe(2);
    });
    expect((await get<Service>(SERVICES, names.service)).spec.ports[0]).toMatchObject({ port: 9191 });
  });

  it('leaves the replica count alone while spec.replicas is unset, and sets it once it is', async () => {
    await createProxy('scale', { remoteUrl: 'https://mcp.example.com/mcp' });
    const { deployment } = proxyObjectNames('scale');
    await eventually(() => get<Deployment>(DEPLOYMENTS, deployment), WAIT_MS);
    // An autoscaler (another field manager) sets the count.
    await admin.request(HttpMethod.PATCH, objectPath(DEPLOYMENTS, env.namespace, deployment), {
      body: { spec: { replicas: 3 } },
      contentType: 'application/merge-patch+json',
      query: { fieldManager: 'autoscaler' },
    });
    // A change that makes the operator apply the Deployment again.
    await patchProxy('scale', { remoteUrl: 'https://mcp.example.com/v2' });
    await eventually(async () => {
      const d = await get<Deployment>(DEPLOYMENTS, deployment);
      expect(d.spec.template.metadata.annotations?.[RUNCONFIG_CHECKSUM]).toBeDefined();
      const cm = await get(CONFIG_MAPS, proxyObjectNames('scale').configMap);
      expect((cm.data as Record<string, string>)['runconfig.json']).toContain('/v2');
    }, WAIT_MS);
    expect((await get<Deployment>(DEPLOYMENTS, deployment)).spec.replicas).toBe(3);

    await patchProxy('scale', { replicas: 2 });
    await eventually(
      async () => expect((await get<Deployment>(DEPLOYMENTS, deployment)).spec.replicas).toBe(2),
      WAIT_MS,
    );
    const status = await statusEventually('scale', (s) =>
      expect(condition(s, 'SessionStorageWarning')).toMatchObject({
        status: 'True',
        reason: 'SessionStorageMissingForReplicas',
      }),
    );
    expect(status.phase).not.toBe('Failed');
  });
});

describe('MCPRemoteProxy: ServiceAccount', () => {
  it('puts imagePullSecrets on the Deployment and the generated ServiceAccount; spec.serviceAccount replaces (and removes) the generated one', async () => {
    await createProxy('accounts', {
      remoteUrl: 'https://mcp.example.com/mcp',
      resourceOverrides: { proxyDeployment: { imagePullSecrets: [{ name: 'registry-creds' }] } },
    });
    const names = proxyObjectNames('accounts');
    await eventually(() => get(SERVICES, names.service), WAIT_MS);
    const account = await get(SERVICE_ACCOUNTS, names.serviceAccount);
    expect(account.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
    const podSpec = (await get<Deployment>(DEPLOYMENTS, names.deployment)).spec.template.spec as {
      serviceAccountName?: string;
      imagePullSecrets?: { name: string }[];
    };
    expect(podSpec.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
    expect(podSpec.serviceAccountName).toBe(names.serviceAccount);

    await patchProxy('accounts', { serviceAccount: 'team-runner' });
    await eventually(async () => {
      const spec = (await get<Deployment>(DEPLOYMENTS, names.deployment)).spec.template.spec as {
        serviceAccountName?: string;
      };
      expect(spec.serviceAccountName).toBe('team-runner');
      await expect(get(SERVICE_ACCOUNTS, names.serviceAccount)).rejects.toSatisfy((e) => isStatus(e, 404));
    }, WAIT_MS);
  });
});

describe('MCPRemoteProxy: update and drift', () => {
  it('rolls the pods when the RunConfig changes (checksum annotation) and puts back a deleted Service and an edited Deployment', async () => {
    await createProxy('drift', { remoteUrl: 'https://mcp.example.com/mcp' });
    const names = proxyObjectNames('drift');
    const before = await eventually(() => get<Deployment>(DEPLOYMENTS, names.deployment), WAIT_MS);
    const checksum = before.spec.template.metadata.annotations?.[RUNCONFIG_CHECKSUM];
    expect(checksum).toMatch(/^[0-9a-f]{16}$/);

    await patchProxy('drift', { trustProxyHeaders: true });
    await eventually(async () => {
      const after = await get<Deployment>(DEPLOYMENTS, names.deployment);
      expect(after.spec.template.metadata.annotations?.[RUNCONFIG_CHECKSUM]).not.toBe(checksum);
    }, WAIT_MS);

    await admin.delete(objectPath(SERVICES, env.namespace, names.service));
    await eventually(() => get(SERVICES, names.service), WAIT_MS);

    await admin.request(HttpMethod.PATCH, objectPath(DEPLOYMENTS, env.namespace, names.deployment), {
      body: {
        spec: { template: { spec: { containers: [{ name: 'moat', image: 'example.test/evil:1' }] } } },
      },
      contentType: 'application/strategic-merge-patch+json',
      query: { fieldManager: 'kubectl-edit' },
    });
    await eventually(async () => {
      expect(moatContainer(await get<Deployment>(DEPLOYMENTS, names.deployment)).image).toBe(
        TEST_PROXY_IMAGE,
      );
    }, WAIT_MS);
  });
});

describe('MCPRemoteProxy: checks', () => {
  it('a blocked remoteUrl fails with the condition and an Event and makes no Deployment; fixing it recovers', async () => {
    await createProxy('blocked', { remoteUrl: 'http://169.254.169.254/latest' });
    const failed = await statusEventually('blocked', (s) => expect(s.phase).toBe('Failed'));
    expect(condition(failed, CONDITION.remoteUrl)).toMatchObject({
      status: 'False',
      reason: 'RemoteURLBlocked',
    });
    expect(failed.message).toContain('spec.remoteUrl');
    expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    await expect(get(DEPLOYMENTS, proxyObjectNames('blocked').deployment)).rejects.toSatisfy((e) =>
      isStatus(e, 404),
    );
    await eventually(async () => {
      const events = await admin.list(collectionPath(EVENTS, env.namespace));
      const mine = events.items.filter((e) => (e.involvedObject as { name: string }).name === 'blocked');
      expect(mine).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'RemoteURLBlocked' }));
    }, WAIT_MS);

    await patchProxy('blocked', { remoteUrl: 'https://mcp.example.com/mcp' });
    await statusEventually('blocked', (s) => {
      expect(s.phase).toBe('Pending');
      expect(condition(s, CONDITION.remoteUrl)).toMatchObject({ status: 'True' });
    });
    await get(DEPLOYMENTS, proxyObjectNames('blocked').deployment);
  });

  it('a forwarded header the proxy would refuse at start fails validation, naming the header, and makes no Deployment', async () => {
    await createProxy('hop-header', {
      remoteUrl: 'https://mcp.example.com/mcp',
      headerForward: { addPlaintextHeaders: { Connection: 'close' } },
    });
    const failed = await statusEventually('hop-header', (s) => expect(s.phase).toBe('Failed'));
    expect(condition(failed, CONDITION.headerForward)).toMatchObject({
      status: 'False',
      reason: 'HeaderNotAllowed',
    });
    expect(condition(failed, CONDITION.headerForward)?.message).toContain(
      'the Connection header cannot be set',
    );
    await expect(get(DEPLOYMENTS, proxyObjectNames('hop-header').deployment)).rejects.toSatisfy((e) =>
      isStatus(e, 404),
    );
  });

  it('a missing header Secret fails the proxy; the Secret appearing recovers it, and rotating it rolls the pods', async () => {
    await createProxy('headers', {
      remoteUrl: 'https://mcp.example.com/mcp',
      headerForward: {
        addHeadersFromSecret: [
          { headerName: 'X-Api-Key', valueSecretRef: { name: 'api-key', key: 'token' } },
        ],
      },
    });
    const failed = await statusEventually('headers', (s) => expect(s.phase).toBe('Failed'));
    expect(condition(failed, CONDITION.secrets)).toMatchObject({
      status: 'False',
      reason: 'SecretNotFound',
    });
    expect(condition(failed, CONDITION.secrets)?.message).toContain('api-key');

    await admin.create(collectionPath(SECRETS, env.namespace), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'api-key' },
      stringData: { token: 'first-value' },
    });
    await statusEventually('headers', (s) => expect(s.phase).toBe('Pending'));
    const { deployment, configMap } = proxyObjectNames('headers');
    const before = await get<Deployment>(DEPLOYMENTS, deployment);
    expect(moatContainer(before).env).toContainEqual({
      name: 'MOAT_SECRET_HEADER_FORWARD_0',
      valueFrom: { secretKeyRef: { name: 'api-key', key: 'token' } },
    });
    const cm = await get(CONFIG_MAPS, configMap);
    expect(JSON.stringify(cm.data)).not.toContain('first-value');

    await admin.mergePatch(objectPath(SECRETS, env.namespace, 'api-key'), {
      stringData: { token: 'second-value' },
    });
    await eventually(async () => {
      const after = await get<Deployment>(DEPLOYMENTS, deployment);
      expect(after.spec.template.metadata.annotations?.[SECRETS_CHECKSUM]).not.toBe(
        before.spec.template.metadata.annotations?.[SECRETS_CHECKSUM],
      );
    }, WAIT_MS);
  });

  it('invalid inline Cedar fails with AuthzConfigValidated; primaryUpstreamProvider raises the advisory condition', async () => {
    await createProxy('cedar', {
      remoteUrl: 'https://mcp.example.com/mcp',
      authzConfig: { type: 'inline', inline: { policies: ['permit(principal, action, resource'] } },
    });
    const failed = await statusEventually('cedar', (s) => expect(s.phase).toBe('Failed'));
    expect(condition(failed, CONDITION.authzConfig)).toMatchObject({
      status: 'False',
      reason: 'AuthzPolicySyntaxInvalid',
    });

    await patchProxy('cedar', {
      authzConfig: {
        type: 'inline',
        inline: { policies: ['permit(principal, action, resource);'], primaryUpstreamProvider: 'github' },
      },
    });
    const fixed = await statusEventually('cedar', (s) => expect(s.phase).toBe('Pending'));
    expect(condition(fixed, CONDITION.authzConfig)).toMatchObject({ status: 'True' });
    expect(condition(fixed, 'AuthzPrimaryUpstreamProviderIgnored')).toMatchObject({
      status: 'True',
      reason: 'PrimaryUpstreamProviderIgnored',
    });
  });
});

describe('MCPRemoteProxy: a referenced ConfigMap', () => {
  it('a missing authz ConfigMap fails the proxy; creating it recovers, and editing it rolls the pods', async () => {
    await createProxy('authz-cm', {
      remoteUrl: 'https://mcp.example.com/mcp',
      authzConfig: { type: 'configMap', configMap: { name: 'policies', key: 'authz.json' } },
    });
    const failed = await statusEventually('authz-cm', (s) => expect(s.phase).toBe('Failed'));
    expect(condition(failed, CONDITION.authzConfig)).toMatchObject({
      status: 'False',
      reason: 'AuthzConfigMapNotFound',
    });

    const policies = (...rules: string[]) =>
      JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: rules, entities_json: '[]' } });
    await admin.create(collectionPath(CONFIG_MAPS, env.namespace), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'policies' },
      data: { 'authz.json': policies('permit(principal, action, resource);') },
    });
    await statusEventually('authz-cm', (s) => expect(s.phase).toBe('Pending'));
    const { deployment } = proxyObjectNames('authz-cm');
    const before = (await get<Deployment>(DEPLOYMENTS, deployment)).spec.template.metadata.annotations;

    await admin.mergePatch(objectPath(CONFIG_MAPS, env.namespace, 'policies'), {
      data: { 'authz.json': policies('forbid(principal, action, resource);') },
    });
    await eventually(async () => {
      const after = (await get<Deployment>(DEPLOYMENTS, deployment)).spec.template.metadata.annotations;
      expect(after?.[RUNCONFIG_CHECKSUM]).not.toBe(before?.[RUNCONFIG_CHECKSUM]);
    }, WAIT_MS);
  });
});

describe('MCPRemoteProxy: deletion', () => {
  it('reports Terminating, deletes its objects itself (no garbage collector runs) and then releases the proxy', async () => {
    await createProxy('gone', {
      remoteUrl: 'https://mcp.example.com/mcp',
    });
    const names = proxyObjectNames('gone');
    await eventually(() => get(DEPLOYMENTS, names.deployment), WAIT_MS);
    // A second finalizer (the test's) keeps the proxy readable after ours is removed.
    await admin.mergePatch(objectPath(REMOTE_PROXIES, env.namespace, 'gone'), {
      metadata: { finalizers: [PROXY_FINALIZER, 'test.moat.dev/hold'] },
    });
    await admin.delete(objectPath(REMOTE_PROXIES, env.namespace, 'gone'));
    await eventually(async () => {
      const proxy = await admin.get(objectPath(REMOTE_PROXIES, env.namespace, 'gone'));
      expect(proxy.metadata?.finalizers).toEqual(['test.moat.dev/hold']);
      expect((proxy.status as ProxyStatus).phase).toBe('Terminating');
    }, WAIT_MS);
    for (const [type, name] of [
      [DEPLOYMENTS, names.deployment],
      [SERVICES, names.service],
      [CONFIG_MAPS, names.configMap],
      [SERVICE_ACCOUNTS, names.serviceAccount],
    ] as const) {
      await expect(get(type, name)).rejects.toSatisfy((e) => isStatus(e, 404));
    }
    await admin.mergePatch(objectPath(REMOTE_PROXIES, env.namespace, 'gone'), {
      metadata: { finalizers: [] },
    });
  });

  it('runs without reconcile errors under the shipped RBAC', () => {
    expect(loggedErrors(env.logLines())).toEqual([]);
  });
});
