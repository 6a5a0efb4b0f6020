import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { MCPRemoteProxySpecInput } from '../crd/index.js';
import { PROXY_UID } from './deployment.js';
import { RESTRICTED_PROXY_CONTAINER, makeInputs } from './fixtures.js';
import { desiredObjects } from './objects.js';

function pod(spec: Omit<MCPRemoteProxySpecInput, 'remoteUrl'>): {
  pod: V1PodSpec;
  moat: V1Container;
  ignored: string[];
} {
  const objects = desiredObjects(makeInputs({ remoteUrl: 'https://mcp.example.com', ...spec }), {
    proxyImage: 'img',
  });
  const podSpec = objects.deployment.spec!.template.spec!;
  return { pod: podSpec, moat: podSpec.containers.find((c) => c.name === 'moat')!, ignored: objects.ignored };
}

const toleration = (key: string) => ({ key, operator: 'Exists' as const, effect: 'NoSchedule' as const });

describe('resourceOverrides and podTemplateSpec merge (spec §2.2)', () => {
  it('nodeSelector: merged per key, podTemplateSpec wins', () => {
    const { pod: p } = pod({
      resourceOverrides: { proxyDeployment: { nodeSelector: { zone: 'a', disk: 'ssd' } } },
      podTemplateSpec: { spec: { nodeSelector: { zone: 'b', arch: 'arm64' } } },
    });
    expect(p.nodeSelector).toEqual({ zone: 'b', disk: 'ssd', arch: 'arm64' });
  });

  it('nodeSelector from either side alone', () => {
    expect(
      pod({ resourceOverrides: { proxyDeployment: { nodeSelector: { a: '1' } } } }).pod.nodeSelector,
    ).toEqual({ a: '1' });
    expect(pod({ podTemplateSpec: { spec: { nodeSelector: { b: '2' } } } }).pod.nodeSelector).toEqual({
      b: '2',
    });
    expect(pod({}).pod.nodeSelector).toBeUndefined();
  });

  it('tolerations: atomic, a podTemplateSpec list replaces the overrides list', () => {
    const overrides = {
      resourceOverrides: { proxyDeployment: { tolerations: [toleration('a'), toleration('b')] } },
    };
    expect(pod(overrides).pod.tolerations).toEqual([toleration('a'), toleration('b')]);
    expect(
      pod({ ...overrides, podTemplateSpec: { spec: { tolerations: [toleration('c')] } } }).pod.tolerations,
    ).toEqual([toleration('c')]);
  });

  it('affinity: merged per sub-field, podTemplateSpec wins where both set one', () => {
    const required = (value: string) => ({
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In' as const, values: [value] }] }],
    });
    const preferred = [
      { weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists' as const }] } },
    ];
    const antiAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { a: 'b' } } },
      ],
    };
    const { pod: p } = pod({
      resourceOverrides: {
        proxyDeployment: {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: required('a'),
              preferredDuringSchedulingIgnoredDuringExecution: preferred,
            },
            podAntiAffinity: antiAffinity,
          },
        },
      },
      podTemplateSpec: {
        spec: {
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: required('b') } },
        },
      },
    });
    expect(p.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: required('b'),
        preferredDuringSchedulingIgnoredDuringExecution: preferred,
      },
      podAntiAffinity: antiAffinity,
    });
  });

  it('env: only on the moat container, merged by name, podTemplateSpec last', () => {
    const { pod: p, moat } = pod({
      resourceOverrides: {
        proxyDeployment: {
          env: [
            { name: 'MOAT_DEBUG', value: 'true' },
            { name: 'A', value: '1' },
          ],
        },
      },
      podTemplateSpec: {
        spec: {
          containers: [
            {
              name: 'moat',
              env: [
                { name: 'A', value: '2' },
                { name: 'HOME', value: '/home/x' },
              ],
            },
            { name: 'sidecar', image: 'busybox' },
          ],
        },
      },
    });
    const env = Object.fromEntries(moat.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      MOAT_DEBUG: 'true',
      A: '2',
      HOME: '/home/x',
      MOAT_SECRETS_PROVIDER: 'environment',
    });
    expect(p.containers.find((c) => c.name === 'sidecar')!.env).toBeUndefined();
  });

  it('env the proxy reads its secrets from cannot be redirected', () => {
    const { moat, ignored } = pod({
      headerForward: {
        addHeadersFromSecret: [{ headerName: 'X-Key', valueSecretRef: { name: 's', key: 'k' } }],
      },
      resourceOverrides: {
        proxyDeployment: { env: [{ name: 'MOAT_SECRET_HEADER_FORWARD_0', value: 'stolen' }] },
      },
    });
    expect(moat.env!.find((e) => e.name === 'MOAT_SECRET_HEADER_FORWARD_0')).toEqual({
      name: 'MOAT_SECRET_HEADER_FORWARD_0',
      valueFrom: { secretKeyRef: { name: 's', key: 'k' } },
    });
    expect(ignored).toContain('resourceOverrides.proxyDeployment.env[name=MOAT_SECRET_HEADER_FORWARD_0]');
  });

  it('imagePullSecrets: union by name of overrides and podTemplateSpec', () => {
    const { pod: p } = pod({
      resourceOverrides: { proxyDeployment: { imagePullSecrets: [{ name: 'a' }, { name: 'b' }] } },
      podTemplateSpec: { spec: { imagePullSecrets: [{ name: 'b' }, { name: 'c' }] } },
    });
    expect(p.imagePullSecrets).toEqual([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
  });

  it('other pod fields, sidecars, volumes and mounts are applied', () => {
    const {
      pod: p,
      moat,
      ignored,
    } = pod({
      podTemplateSpec: {
        spec: {
          runtimeClassName: 'gvisor',
          priorityClassName: 'high',
          terminationGracePeriodSeconds: 45,
          volumes: [{ name: 'extra', emptyDir: {} }],
          containers: [
            {
              name: 'moat',
              resources: { limits: { memory: '1Gi' } },
              imagePullPolicy: 'Always',
              volumeMounts: [{ name: 'extra', mountPath: '/extra' }],
            },
            { name: 'log-shipper', image: 'fluent-bit' },
          ],
          initContainers: [{ name: 'wait', image: 'busybox' }],
        },
      },
    });
    expect(p).toMatchObject({
      runtimeClassName: 'gvisor',
      priorityClassName: 'high',
      terminationGracePeriodSeconds: 45,
    });
    expect(p.volumes!.map((v) => v.name)).toEqual(['runconfig', 'tmp', 'extra']);
    expect(p.containers.map((c) => c.name)).toEqual(['moat', 'log-shipper']);
    expect(p.initContainers!.map((c) => c.name)).toEqual(['wait']);
    expect(moat.resources).toEqual({ limits: { memory: '1Gi' } });
    expect(moat.imagePullPolicy).toBe('Always');
    expect(moat.volumeMounts).toContainEqual({ name: 'extra', mountPath: '/extra' });
    expect(ignored).toEqual([]);
  });

  it('podTemplateSpec labels and annotations reach the pod template; selector labels stay', () => {
    const objects = desiredObjects(
      makeInputs({
        remoteUrl: 'https://mcp.example.com',
        podTemplateSpec: {
          metadata: { labels: { 'app.kubernetes.io/name': 'x', extra: 'y' }, annotations: { note: 'z' } },
        },
      }),
      { proxyImage: 'img' },
    );
    const meta = objects.deployment.spec!.template.metadata!;
    expect(meta.labels).toMatchObject({ 'app.kubernetes.io/name': 'mcpremoteproxy', extra: 'y' });
    expect(meta.annotations).toMatchObject({ note: 'z' });
  });

  it('never lets the proxy container run as root, escalate or change its contract', () => {
    const {
      pod: p,
      moat,
      ignored,
    } = pod({
      podTemplateSpec: {
        spec: {
          hostNetwork: true,
          hostPID: true,
          serviceAccountName: 'cluster-admin',
          automountServiceAccountToken: true,
          securityContext: { runAsNonRoot: false, runAsUser: 0, fsGroup: 2000 },
          volumes: [
            { name: 'host', hostPath: { path: '/' } },
            { name: 'runconfig', emptyDir: {} },
          ],
          containers: [
            {
              name: 'moat',
              image: 'evil',
              command: ['sh'],
              args: ['-c', 'id'],
              ports: [{ containerPort: 1 }],
              volumeMounts: [{ name: 'x', mountPath: '/etc/moat' }],
              securityContext: {
                runAsUser: 0,
                privileged: true,
                allowPrivilegeEscalation: true,
                readOnlyRootFilesystem: false,
                capabilities: { add: ['NET_ADMIN'] },
                seccompProfile: { type: 'Unconfined' },
              },
            },
            {
              name: 'side',
              image: 'x',
              securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'], drop: ['NET_RAW'] } },
            },
          ],
        },
      },
    });
    expect(p.hostNetwork).toBeUndefined();
    expect(p.hostPID).toBeUndefined();
    expect(p.serviceAccountName).toBe('mcp-github-remote-proxy');
    expect(p.automountServiceAccountToken).toBe(false);
    expect(p.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: PROXY_UID,
      runAsGroup: PROXY_UID,
      fsGroup: 2000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(p.volumes!.map((v) => v.name)).toEqual(['runconfig', 'tmp']);
    expect(p.volumes![0]!.configMap).toBeDefined();
    expect(moat.image).toBe('img');
    expect(moat.command).toBeUndefined();
    expect(moat.args).toEqual(['proxy', '--config', '/etc/moat/runconfig.json']);
    expect(moat.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(moat.volumeMounts!.filter((m) => m.mountPath === '/etc/moat')).toEqual([
      { name: 'runconfig', mountPath: '/etc/moat', readOnly: true },
    ]);
    expect(moat.securityContext).toEqual(RESTRICTED_PROXY_CONTAINER);
    const side = p.containers.find((c) => c.name === 'side')!;
    expect(side.securityContext).toEqual({
      runAsNonRoot: true,
      privileged: false,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['NET_RAW'] },
    });
    expect(ignored).toEqual(
      expect.arrayContaining([
        'podTemplateSpec.spec.hostNetwork',
        'podTemplateSpec.spec.hostPID',
        'podTemplateSpec.spec.serviceAccountName',
        'podTemplateSpec.spec.automountServiceAccountToken',
        'podTemplateSpec.spec.securityContext.runAsNonRoot',
        'podTemplateSpec.spec.securityContext.runAsUser',
        'podTemplateSpec.spec.volumes[name=host].hostPath',
        'podTemplateSpec.spec.volumes[name=runconfig]',
        'podTemplateSpec.spec.containers[name=moat].image',
        'podTemplateSpec.spec.containers[name=moat].command',
        'podTemplateSpec.spec.containers[name=moat].args',
        'podTemplateSpec.spec.containers[name=moat].ports',
        'podTemplateSpec.spec.containers[name=moat].volumeMounts[mountPath=/etc/moat]',
        'podTemplateSpec.spec.containers[name=moat].securityContext.privileged',
        'podTemplateSpec.spec.containers[name=moat].securityContext.runAsUser',
        'podTemplateSpec.spec.containers[name=moat].securityContext.capabilities.add',
        'podTemplateSpec.spec.containers[name=moat].securityContext.seccompProfile',
        'podTemplateSpec.spec.containers[name=side].securityContext.privileged',
        'podTemplateSpec.spec.containers[name=side].securityContext.capabilities.add',
      ]),
    );
  });

  it('allows a stricter or different non-root identity', () => {
    const { moat } = pod({
      podTemplateSpec: {
        spec: {
          containers: [
            {
              name: 'moat',
              securityContext: {
                runAsUser: 1234,
                seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' },
              },
            },
          ],
        },
      },
    });
    expect(moat.securityContext).toMatchObject({
      runAsUser: 1234,
      seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' },
    });
  });
});
