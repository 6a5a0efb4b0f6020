/**
 * The proxy Deployment: one `moat` container running `moat proxy --config` on the RunConfig
 * ConfigMap with the proxy launch settings in its env (NODE_OPTIONS, MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_), secrets as
 * `secretKeyRef` env, CA bundles as non-optional volumes (a missing Secret
 * or key keeps the pod in ContainerCreating rather than starting without verification), hardened
 * security contexts, and checksums on the pod template so a config or secret change rolls pods.
 */
import type {
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1PodTemplateSpec,
  V1Probe,
  V1ResourceRequirements,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { RunConfig } from '../../config/runconfig.js';
import { proxyContainerEnv } from '../../util/proxy-launch.js';
import type { MCPRemoteProxySpec } from '../crd/index.js';
import { configHash } from './hash.js';
import type { OperatorOptions, ProxyInputs } from './inputs.js';
import { mergePodTemplate } from './merge.js';
import {
  CA_FILE,
  CONFIG_DIR,
  OIDC_CA_DIR,
  OTEL_CA_DIR,
  REDIS_CA_DIR,
  RUNCONFIG_KEY,
  RUNCONFIG_PATH,
  TMP_DIR,
} from './mounts.js';
import { proxyLabels, proxyObjectNames, selectorLabels } from './names.js';
import { proxySecrets } from './secrets.js';

export const RUNCONFIG_CHECKSUM = 'moat.dev/runconfig-checksum';
export const SECRETS_CHECKSUM = 'moat.dev/secrets-checksum';

/** A fixed non-root identity, so the pod runs non-root whatever USER the image declares. */
export const PROXY_UID = 65532;

const PORT_NAME = 'http';

export interface DeploymentResult {
  deployment: V1Deployment;
  /** User fields of resourceOverrides/podTemplateSpec that were not applied (see merge.ts). */
  ignored: string[];
}

export function buildDeployment(
  inputs: ProxyInputs,
  runConfig: RunConfig,
  options: OperatorOptions,
): DeploymentResult {
  const { proxy } = inputs;
  const { spec } = proxy;
  const name = proxy.metadata.name ?? '';
  const names = proxyObjectNames(name);
  const overrides = spec.resourceOverrides?.proxyDeployment;
  const checksums = {
    [RUNCONFIG_CHECKSUM]: configHash(runConfig),
    [SECRETS_CHECKSUM]: mountedChecksum(inputs),
  };
  const generated: V1PodTemplateSpec = {
    metadata: { labels: proxyLabels(name), annotations: checksums },
    spec: {
      serviceAccountName: spec.serviceAccount ?? names.serviceAccount,
      // The proxy calls no Kubernetes API; its token is mounted only to fetch the cluster's OIDC keys.
      automountServiceAccountToken: usesClusterAuth(inputs),
      ...pullSecretRefs(spec, options),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: PROXY_UID,
        runAsGroup: PROXY_UID,
        fsGroup: PROXY_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [proxyContainer(inputs, options)],
      volumes: volumes(inputs, names.configMap),
    },
  };
  const { template, ignored } = mergePodTemplate(
    generated,
    overrides,
    spec.podTemplateSpec,
    selectorLabels(name),
    checksums,
  );
  const deployment: V1Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: names.deployment,
      namespace: proxy.metadata.namespace,
      labels: { ...overrides?.labels, ...proxyLabels(name) },
      ...(overrides?.annotations ? { annotations: overrides.annotations } : {}),
    },
    spec: {
      // Unset leaves the count to an autoscaler; the apply layer must then not send the field.
      ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
      selector: { matchLabels: selectorLabels(name) },
      template,
    },
  };
  return { deployment, ignored };
}

/** Pull secrets of the pod and of the generated ServiceAccount: the proxy's own, then the operator's. */
export function pullSecrets(spec: MCPRemoteProxySpec, options: OperatorOptions): string[] {
  const own = (spec.resourceOverrides?.proxyDeployment?.imagePullSecrets ?? []).map((s) => s.name);
  return [...new Set([...own, ...(options.defaultImagePullSecrets ?? [])].filter((n) => n !== ''))];
}

function pullSecretRefs(spec: MCPRemoteProxySpec, options: OperatorOptions) {
  const names = pullSecrets(spec, options);
  return names.length > 0 ? { imagePullSecrets: names.map((name) => ({ name })) } : {};
}

function usesClusterAuth(inputs: ProxyInputs): boolean {
  const oidc = inputs.oidcConfig?.spec;
  return (
    inputs.proxy.spec.oidcConfigRef !== undefined &&
    oidc?.type === 'kubernetesServiceAccount' &&
    (oidc.kubernetesServiceAccount?.useClusterAuth ?? true)
  );
}

/**
 * Changes when a Secret or CA ConfigMap the pod reads changes (name, key or content version): env
 * from a Secret and mounted files are read once at start, so the pods must roll.
 */
function mountedChecksum(inputs: ProxyInputs): string {
  const secrets = proxySecrets(inputs).map(({ ref, delivery }) => ({
    ref,
    delivery,
    version: inputs.secrets[ref.name]?.resourceVersion,
  }));
  const configMaps = caConfigMaps(inputs).map(({ ref }) => ({
    ref,
    version: inputs.configMaps[ref.name]?.resourceVersion,
  }));
  return configHash({ secrets, configMaps });
}

interface CaMount {
  volume: string;
  dir: string;
  ref: { name: string; key: string };
}

/** CA bundles from ConfigMaps: the OIDC provider's and the telemetry collector's. */
function caConfigMaps(inputs: ProxyInputs): CaMount[] {
  const out: CaMount[] = [];
  const oidc = inputs.proxy.spec.oidcConfigRef ? inputs.oidcConfig?.spec.inline?.caBundleRef : undefined;
  if (oidc) out.push({ volume: 'oidc-ca', dir: OIDC_CA_DIR, ref: oidc });
  const otel = inputs.proxy.spec.telemetryConfigRef
    ? inputs.telemetryConfig?.spec.openTelemetry?.caBundleRef
    : undefined;
  if (otel) out.push({ volume: 'otel-ca', dir: OTEL_CA_DIR, ref: otel });
  return out;
}

function proxyContainer(inputs: ProxyInputs, options: OperatorOptions): V1Container {
  const { spec } = inputs.proxy;
  const mounts: V1VolumeMount[] = [
    { name: 'runconfig', mountPath: CONFIG_DIR, readOnly: true },
    { name: 'tmp', mountPath: TMP_DIR },
  ];
  if (hasRedisCa(spec)) mounts.push({ name: 'redis-ca', mountPath: REDIS_CA_DIR, readOnly: true });
  for (const ca of caConfigMaps(inputs)) mounts.push({ name: ca.volume, mountPath: ca.dir, readOnly: true });
  const resources = resourceRequirements(spec);
  return {
    name: 'moat',
    image: options.proxyImage,
    args: ['proxy', '--config', RUNCONFIG_PATH],
    ports: [{ name: PORT_NAME, containerPort: spec.proxyPort, protocol: 'TCP' }],
    env: env(inputs),
    volumeMounts: mounts,
    startupProbe: probe({ periodSeconds: 2, failureThreshold: 30 }),
    readinessProbe: probe({ periodSeconds: 5, failureThreshold: 3 }),
    livenessProbe: probe({ periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 5 }),
    ...(resources ? { resources } : {}),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: PROXY_UID,
      runAsGroup: PROXY_UID,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
}

function probe(timing: Pick<V1Probe, 'periodSeconds' | 'failureThreshold' | 'timeoutSeconds'>): V1Probe {
  return { httpGet: { path: '/health', port: PORT_NAME }, timeoutSeconds: 3, ...timing };
}

function env(inputs: ProxyInputs): V1EnvVar[] {
  const out: V1EnvVar[] = [
    // The launch settings every proxy process gets (the image's entry point runs `moat proxy`);
    // env of the user's own with the same name replaces them (merge.ts).
    ...Object.entries(proxyContainerEnv()).map(([name, value]) => ({ name, value })),
    { name: 'HOME', value: TMP_DIR },
    { name: 'MOAT_HOME', value: `${TMP_DIR}/moat` },
    { name: 'MOAT_SECRETS_PROVIDER', value: 'environment' },
  ];
  for (const { ref, delivery } of proxySecrets(inputs)) {
    if ('env' in delivery) {
      out.push({ name: delivery.env, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } });
    }
  }
  return out;
}

function resourceRequirements(spec: MCPRemoteProxySpec): V1ResourceRequirements | undefined {
  const pick = (r: { cpu?: string; memory?: string } | undefined) => {
    const out: Record<string, string> = {};
    if (r?.cpu) out.cpu = r.cpu;
    if (r?.memory) out.memory = r.memory;
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const limits = pick(spec.resources?.limits);
  const requests = pick(spec.resources?.requests);
  if (!limits && !requests) return undefined;
  return { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) };
}

function hasRedisCa(spec: MCPRemoteProxySpec): boolean {
  return spec.sessionStorage?.provider === 'redis' && spec.sessionStorage.tls?.caCertSecretRef !== undefined;
}

function volumes(inputs: ProxyInputs, configMapName: string): V1Volume[] {
  const { spec } = inputs.proxy;
  const out: V1Volume[] = [
    {
      name: 'runconfig',
      configMap: { name: configMapName, items: [{ key: RUNCONFIG_KEY, path: RUNCONFIG_KEY }] },
    },
    { name: 'tmp', emptyDir: {} },
  ];
  const redisCa =
    spec.sessionStorage?.provider === 'redis' ? spec.sessionStorage.tls?.caCertSecretRef : undefined;
  if (redisCa) {
    out.push({
      name: 'redis-ca',
      secret: { secretName: redisCa.name, items: [{ key: redisCa.key, path: CA_FILE }], optional: false },
    });
  }
  for (const ca of caConfigMaps(inputs)) {
    out.push({
      name: ca.volume,
      configMap: { name: ca.ref.name, items: [{ key: ca.ref.key, path: CA_FILE }], optional: false },
    });
  }
  return out;
}
