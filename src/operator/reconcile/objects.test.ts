import type { V1Container, V1Deployment, V1EnvVar } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  mcpExternalAuthConfigSpecSchema,
  mcpOidcConfigSpecSchema,
  mcpTelemetryConfigSpecSchema,
  type MCPRemoteProxySpecInput,
} from '../crd/index.js';
import { PROXY_UID, RUNCONFIG_CHECKSUM, SECRETS_CHECKSUM } from './deployment.js';
import { RESTRICTED_PROXY_CONTAINER, makeConfig, makeInputs, secret } from './fixtures.js';
import type { OperatorOptions, ProxyInputs } from './inputs.js';
import { desiredObjects } from './objects.js';

const OPTIONS = { proxyImage: 'mcp-moat:0.1.0' };
const REMOTE = 'https://mcp.example.com/mcp';
const SELECTOR = { 'app.kubernetes.io/name': 'mcpremoteproxy', 'app.kubernetes.io/instance': 'github' };
const LABELS = {
  ...SELECTOR,
  'app.kubernetes.io/component': 'remote-proxy',
  'app.kubernetes.io/managed-by': 'moat-operator',
};

function build(
  spec: Omit<MCPRemoteProxySpecInput, 'remoteUrl'> = {},
  extra: Partial<ProxyInputs> = {},
  options: OperatorOptions = OPTIONS,
) {
  return desiredObjects(makeInputs({ remoteUrl: REMOTE, ...spec }, extra), options);
}
function proxyContainer(deployment: V1Deployment): V1Container {
  return deployment.spec!.template.spec!.containers.find((c) => c.name === 'moat')!;
}
function envOf(deployment: V1Deployment): Record<string, V1EnvVar> {
  return Object.fromEntries((proxyContainer(deployment).env ?? []).map((e) => [e.name, e]));
}

describe('desiredObjects for a minimal proxy', () => {
  const objects = build();

  it('makes a ServiceAccount with no token automount and no Role', () => {
    expect(objects.serviceAccount).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'mcp-github-remote-proxy', namespace: 'team-a', labels: LABELS },
      automountServiceAccountToken: false,
    });
    expect(Object.keys(objects)).not.toContain('role');
  });

  it('puts the RunConfig JSON in the ConfigMap', () => {
    expect(objects.configMap.metadata).toEqual({
      name: 'mcp-github-remote-proxy-config',
      namespace: 'team-a',
      labels: LABELS,
    });
    expect(JSON.parse(objects.configMap.data!['runconfig.json']!)).toEqual(objects.runConfig);
  });

  it('builds the Deployment', () => {
    const d = objects.deployment;
    expect(d.metadata).toEqual({ name: 'mcp-github-remote-proxy', namespace: 'team-a', labels: LABELS });
    expect(d.spec!.replicas).toBeUndefined();
    expect('replicas' in d.spec!).toBe(false);
    expect(d.spec!.selector).toEqual({ matchLabels: SELECTOR });
    const template = d.spec!.template;
    expect(template.metadata!.labels).toEqual(LABELS);
    expect(Object.keys(template.metadata!.annotations!).sort()).toEqual([
      RUNCONFIG_CHECKSUM,
      SECRETS_CHECKSUM,
    ]);
    const pod = template.spec!;
    expect(pod.serviceAccountName).toBe('mcp-github-remote-proxy');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.imagePullSecrets).toBeUndefined();
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: PROXY_UID,
      runAsGroup: PROXY_UID,
      fsGroup: PROXY_UID,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.containers).toHaveLength(1);
    expect(pod.volumes).toEqual([
      {
        name: 'runconfig',
        configMap: {
          name: 'mcp-github-remote-proxy-config',
          items: [{ key: 'runconfig.json', path: 'runconfig.json' }],
        },
      },
      { name: 'tmp', emptyDir: {} },
    ]);
    const c = proxyContainer(d);
    expect(c.image).toBe('mcp-moat:0.1.0');
    expect(c.args).toEqual(['proxy', '--config', '/etc/moat/runconfig.json']);
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(c.env).toEqual([
      { name: 'NODE_OPTIONS', value: '--max-semi-space-size=2' },
      { name: 'MALLOC_ARENA_MAX', value: '2' },
      { name: 'MALLOC_MMAP_THRESHOLD_', value: '32768' },
      { name: 'HOME', value: '/tmp' },
      { name: 'MOAT_HOME', value: '/tmp/moat' },
      { name: 'MOAT_SECRETS_PROVIDER', value: 'environment' },
    ]);
    expect(c.volumeMounts).toEqual([
      { name: 'runconfig', mountPath: '/etc/moat', readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
    for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) {
      expect(probe?.httpGet).toEqual({ path: '/health', port: 'http' });
    }
    expect(c.resources).toBeUndefined();
    expect(c.securityContext).toEqual(RESTRICTED_PROXY_CONTAINER);
  });

  it('builds the Service', () => {
    expect(objects.service).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'mcp-github-remote-proxy', namespace: 'team-a', labels: LABELS },
      spec: {
        type: 'ClusterIP',
        selector: SELECTOR,
        ports: [{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }],
        sessionAffinity: 'ClientIP',
      },
    });
    expect(objects.ignored).toEqual([]);
  });
});

describe('desiredObjects, field by field', () => {
  it('proxyPort sets the container port and the Service port', () => {
    const o = build({ proxyPort: 9443 });
    expect(proxyContainer(o.deployment).ports).toEqual([
      { name: 'http', containerPort: 9443, protocol: 'TCP' },
    ]);
    expect(o.service.spec!.ports![0]!.port).toBe(9443);
  });

  it.each([0, 3])('replicas %i is sent', (replicas) => {
    expect(build({ replicas }).deployment.spec!.replicas).toBe(replicas);
  });

  it('sessionAffinity None reaches the Service', () => {
    expect(build({ sessionAffinity: 'None' }).service.spec!.sessionAffinity).toBe('None');
  });

  it('serviceAccount: uses it and makes none', () => {
    const o = build({ serviceAccount: 'existing' });
    expect(o.serviceAccount).toBeUndefined();
    expect(o.deployment.spec!.template.spec!.serviceAccountName).toBe('existing');
  });

  it('resources keep only the quantities that are set', () => {
    const o = build({
      resources: { limits: { memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    });
    expect(proxyContainer(o.deployment).resources).toEqual({
      limits: { memory: '256Mi' },
      requests: { cpu: '100m', memory: '128Mi' },
    });
  });

  it('secrets arrive as secretKeyRef env, never as values', () => {
    const o = build(
      {
        headerForward: {
          addHeadersFromSecret: [{ headerName: 'X-Api-Key', valueSecretRef: { name: 'keys', key: 'api' } }],
        },
        sessionStorage: {
          provider: 'redis',
          address: 'redis:6379',
          passwordRef: { name: 'redis', key: 'password' },
        },
        oidcConfigRef: { name: 'idp', audience: 'gh' },
        externalAuthConfigRef: { name: 'sts' },
      },
      {
        oidcConfig: makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', {
          type: 'inline',
          inline: {
            issuer: 'https://idp.example.com',
            clientId: 'c',
            clientSecretRef: { name: 'idp', key: 'secret' },
          },
        }),
        externalAuthConfig: makeConfig('MCPExternalAuthConfig', mcpExternalAuthConfigSpecSchema, 'sts', {
          type: 'tokenExchange',
          tokenExchange: {
            tokenUrl: 'https://sts.example.com',
            clientId: 'c',
            clientSecretRef: { name: 'sts', key: 's' },
          },
        }),
      },
    );
    const env = envOf(o.deployment);
    const ref = (name: string, key: string) => ({ valueFrom: { secretKeyRef: { name, key } } });
    expect(env.MOAT_SECRET_HEADER_FORWARD_0).toMatchObject(ref('keys', 'api'));
    expect(env.MOAT_SESSION_REDIS_PASSWORD).toMatchObject(ref('redis', 'password'));
    expect(env.MOAT_SECRET_OIDC_CLIENT_SECRET).toMatchObject(ref('idp', 'secret'));
    expect(env.MOAT_SECRET_TOKEN_EXCHANGE_CLIENT_SECRET).toMatchObject(ref('sts', 's'));
    for (const e of Object.values(env)) {
      if (e.name.startsWith('MOAT_SECRET_') || e.name === 'MOAT_SESSION_REDIS_PASSWORD')
        expect(e.value).toBeUndefined();
    }
  });

  it('mounts the Redis CA from its Secret as a non-optional volume', () => {
    const o = build({
      sessionStorage: {
        provider: 'redis',
        address: 'redis:6380',
        tls: { caCertSecretRef: { name: 'redis-tls', key: 'ca.pem' } },
      },
    });
    const pod = o.deployment.spec!.template.spec!;
    expect(pod.volumes).toContainEqual({
      name: 'redis-ca',
      secret: { secretName: 'redis-tls', items: [{ key: 'ca.pem', path: 'ca.crt' }], optional: false },
    });
    expect(proxyContainer(o.deployment).volumeMounts).toContainEqual({
      name: 'redis-ca',
      mountPath: '/etc/moat/redis-ca',
      readOnly: true,
    });
    expect(o.runConfig.scaling_config?.session_redis?.tls?.ca_cert_file).toBe('/etc/moat/redis-ca/ca.crt');
  });

  it('mounts the OIDC and telemetry CA bundles from their ConfigMaps', () => {
    const o = build(
      { oidcConfigRef: { name: 'idp', audience: 'gh' }, telemetryConfigRef: { name: 'otel' } },
      {
        oidcConfig: makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', {
          type: 'inline',
          inline: { issuer: 'https://idp.example.com', caBundleRef: { name: 'idp-ca' } },
        }),
        telemetryConfig: makeConfig('MCPTelemetryConfig', mcpTelemetryConfigSpecSchema, 'otel', {
          openTelemetry: { endpoint: 'otel:4318', caBundleRef: { name: 'otel-ca', key: 'root.pem' } },
        }),
      },
    );
    const pod = o.deployment.spec!.template.spec!;
    expect(pod.volumes).toContainEqual({
      name: 'oidc-ca',
      configMap: { name: 'idp-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }], optional: false },
    });
    expect(pod.volumes).toContainEqual({
      name: 'otel-ca',
      configMap: { name: 'otel-ca', items: [{ key: 'root.pem', path: 'ca.crt' }], optional: false },
    });
    expect(proxyContainer(o.deployment).volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'oidc-ca', mountPath: '/etc/moat/oidc-ca', readOnly: true },
        { name: 'otel-ca', mountPath: '/etc/moat/otel-ca', readOnly: true },
      ]),
    );
  });

  it('mounts the service-account token only for OIDC with cluster auth', () => {
    const o = build(
      { oidcConfigRef: { name: 'idp', audience: 'gh' } },
      {
        oidcConfig: makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', {
          type: 'kubernetesServiceAccount',
          kubernetesServiceAccount: {},
        }),
      },
    );
    expect(o.deployment.spec!.template.spec!.automountServiceAccountToken).toBe(true);
  });

  it('pull secrets: the proxy own, then the operator defaults, on the pod and the ServiceAccount', () => {
    const o = build(
      {
        resourceOverrides: {
          proxyDeployment: { imagePullSecrets: [{ name: 'regcred' }, { name: 'shared' }] },
        },
      },
      {},
      { proxyImage: 'img', defaultImagePullSecrets: ['shared', 'corp'] },
    );
    const expected = [{ name: 'regcred' }, { name: 'shared' }, { name: 'corp' }];
    expect(o.deployment.spec!.template.spec!.imagePullSecrets).toEqual(expected);
    expect(o.serviceAccount!.imagePullSecrets).toEqual(expected);
  });

  it('labels and annotations overrides reach each object; the operator labels win', () => {
    const o = build({
      resourceOverrides: {
        proxyDeployment: {
          labels: { team: 'a', 'app.kubernetes.io/instance': 'hijack' },
          annotations: { owner: 'alice' },
          podTemplateMetadataOverrides: {
            labels: { tier: 'edge' },
            annotations: { 'prometheus.io/scrape': 'true' },
          },
        },
        proxyService: { labels: { exposed: 'yes' }, annotations: { 'cloud.example/lb': 'internal' } },
      },
    });
    expect(o.deployment.metadata!.labels).toEqual({ ...LABELS, team: 'a' });
    expect(o.deployment.metadata!.annotations).toEqual({ owner: 'alice' });
    expect(o.deployment.spec!.template.metadata!.labels).toEqual({ ...LABELS, tier: 'edge' });
    expect(o.deployment.spec!.template.metadata!.annotations!['prometheus.io/scrape']).toBe('true');
    expect(o.service.metadata!.labels).toEqual({ ...LABELS, exposed: 'yes' });
    expect(o.service.metadata!.annotations).toEqual({ 'cloud.example/lb': 'internal' });
    expect(o.configMap.metadata!.labels).toEqual(LABELS);
  });

  it('turns dots into dashes plus a hash, so a.b and a-b do not collide', () => {
    const named = (name: string) => {
      const inputs = makeInputs({ remoteUrl: REMOTE });
      inputs.proxy.metadata.name = name;
      return desiredObjects(inputs, OPTIONS);
    };
    const dotted = named('gh.prod');
    expect(dotted.service.metadata!.name).toMatch(/^mcp-gh-prod-[0-9a-f]{8}-remote-proxy$/);
    expect(dotted.service.metadata!.name).not.toBe(named('gh-prod').service.metadata!.name);
    expect(dotted.deployment.spec!.selector.matchLabels!['app.kubernetes.io/instance']).toBe('gh.prod');
  });

  it('cuts and hashes long names to fit 63 characters', () => {
    const inputs = makeInputs({ remoteUrl: REMOTE });
    inputs.proxy.metadata.name = 'a'.repeat(80);
    const o = desiredObjects(inputs, OPTIONS);
    expect(o.service.metadata!.name!.length).toBeLessThanOrEqual(63);
    expect(o.configMap.metadata!.name!.length).toBeLessThanOrEqual(63);
    expect(o.service.metadata!.name).toMatch(/^mcp-a+-[0-9a-f]{8}-remote-proxy$/);
    expect(
      o.deployment.spec!.selector.matchLabels!['app.kubernetes.io/instance']!.length,
    ).toBeLessThanOrEqual(63);
  });
});

describe('pod template checksums', () => {
  const checksums = (d: V1Deployment) => d.spec!.template.metadata!.annotations!;
  const headerSpec = {
    headerForward: {
      addHeadersFromSecret: [{ headerName: 'X-Key', valueSecretRef: { name: 'keys', key: 'k' } }],
    },
  };

  it('change with the RunConfig', () => {
    const a = checksums(build().deployment);
    const b = checksums(build({ trustProxyHeaders: true }).deployment);
    expect(b[RUNCONFIG_CHECKSUM]).not.toBe(a[RUNCONFIG_CHECKSUM]);
    expect(b[SECRETS_CHECKSUM]).toBe(a[SECRETS_CHECKSUM]);
  });

  it('change with a secret reference and with the Secret content version', () => {
    const v1 = checksums(build(headerSpec, { secrets: { keys: secret('k') } }).deployment);
    const v2 = checksums(
      build(headerSpec, { secrets: { keys: { keys: ['k'], resourceVersion: '2' } } }).deployment,
    );
    const otherKey = checksums(
      build(
        {
          headerForward: {
            addHeadersFromSecret: [{ headerName: 'X-Key', valueSecretRef: { name: 'keys', key: 'j' } }],
          },
        },
        {
          secrets: { keys: secret('k') },
        },
      ).deployment,
    );
    expect(v2[SECRETS_CHECKSUM]).not.toBe(v1[SECRETS_CHECKSUM]);
    expect(otherKey[SECRETS_CHECKSUM]).not.toBe(v1[SECRETS_CHECKSUM]);
    expect(v2[RUNCONFIG_CHECKSUM]).toBe(v1[RUNCONFIG_CHECKSUM]);
  });

  it('cannot be replaced by user annotations', () => {
    const o = build({
      resourceOverrides: {
        proxyDeployment: { podTemplateMetadataOverrides: { annotations: { [RUNCONFIG_CHECKSUM]: 'x' } } },
      },
      podTemplateSpec: { metadata: { annotations: { [SECRETS_CHECKSUM]: 'y' } } },
    });
    expect(checksums(o.deployment)[RUNCONFIG_CHECKSUM]).toBe(
      checksums(build().deployment)[RUNCONFIG_CHECKSUM],
    );
    expect(checksums(o.deployment)[SECRETS_CHECKSUM]).toBe(checksums(build().deployment)[SECRETS_CHECKSUM]);
  });

  it('are stable for the same inputs', () => {
    expect(checksums(build(headerSpec).deployment)).toEqual(checksums(build(headerSpec).deployment));
  });
});
