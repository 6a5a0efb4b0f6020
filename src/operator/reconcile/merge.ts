/**
 * How the user's `resourceOverrides.proxyDeployment` and `podTemplateSpec` reach the generated pod
 * template (spec §2.2). Precedence, lowest first: generated, resourceOverrides, podTemplateSpec.
 *
 * - nodeSelector: merged per key. tolerations: atomic (a podTemplateSpec list replaces the whole
 *   list). affinity: merged per sub-field (nodeAffinity / podAffinity / podAntiAffinity, and inside
 *   each its required / preferred terms, which are atomic).
 * - env: only on the `moat` container, merged by name.
 * - Labels/annotations: added; the selector labels and the checksum annotations stay the
 *   operator's (a changed selector would orphan the pods; a changed checksum would hide a rollout).
 * - imagePullSecrets: union by name.
 * - Other pod fields of podTemplateSpec (runtimeClassName, priorityClassName,
 *   topologySpreadConstraints, extra containers and volumes, …) are applied.
 *
 * Never overridable, because they are the proxy's security boundary or its contract with the
 * operator: the `moat` container's image, command, args, ports and the env it reads its secrets
 * from; the operator's volumes and mounts; serviceAccountName and the token automount; host
 * namespaces (hostNetwork/hostPID/hostIPC); and the hardening of both security contexts (non-root,
 * no privilege escalation, read-only root filesystem, all capabilities dropped, RuntimeDefault
 * seccomp). A user may set other security-context fields, such as a different non-zero UID.
 * Ignored fields are reported so the status can name them.
 */
import type {
  V1Affinity,
  V1Container,
  V1EnvVar,
  V1LocalObjectReference,
  V1PodSecurityContext,
  V1PodSpec,
  V1PodTemplateSpec,
  V1SecurityContext,
  V1Volume,
} from '@kubernetes/client-node';
import type { ProxyDeploymentOverrides } from '../crd/index.js';

export const PROXY_CONTAINER = 'moat';

export interface MergeResult {
  template: V1PodTemplateSpec;
  /** Paths of user fields the operator did not apply (see the module comment for why). */
  ignored: string[];
}

/** Env the proxy reads its secrets and config through: the user cannot redirect it. */
export function isProtectedEnv(name: string): boolean {
  return name.startsWith('MOAT_SECRET') || name === 'MOAT_SESSION_REDIS_PASSWORD';
}

/**
 * The pod template after both kinds of user customization. `generated` is not modified.
 * `protectedAnnotations` are the checksum annotations the user cannot replace.
 */
export function mergePodTemplate(
  generated: V1PodTemplateSpec,
  overrides: ProxyDeploymentOverrides | undefined,
  podTemplateSpec: Record<string, unknown> | undefined,
  protectedLabels: Record<string, string>,
  protectedAnnotations: Record<string, string>,
): MergeResult {
  const ignored: string[] = [];
  const user = (podTemplateSpec ?? {}) as V1PodTemplateSpec;
  const userSpec: Partial<V1PodSpec> = user.spec ?? {};
  const base = structuredClone(generated);
  const spec = base.spec as V1PodSpec;

  const metadata = overrides?.podTemplateMetadataOverrides;
  base.metadata = {
    ...base.metadata,
    labels: {
      ...base.metadata?.labels,
      ...metadata?.labels,
      ...user.metadata?.labels,
      ...protectedLabels,
    },
    annotations: nonEmptyMap({
      ...base.metadata?.annotations,
      ...metadata?.annotations,
      ...user.metadata?.annotations,
      ...protectedAnnotations,
    }),
  };

  const nodeSelector = nonEmptyMap({ ...overrides?.nodeSelector, ...userSpec.nodeSelector });
  const tolerations = userSpec.tolerations ?? overrides?.tolerations;
  const affinity = mergeAffinity(overrides?.affinity, userSpec.affinity);
  const pullSecrets = unionByName([
    ...(spec.imagePullSecrets ?? []),
    ...((overrides?.imagePullSecrets ?? []) as V1LocalObjectReference[]),
    ...(userSpec.imagePullSecrets ?? []),
  ]);

  const merged: V1PodSpec = { ...spec };
  for (const [key, value] of Object.entries(userSpec) as Array<[keyof V1PodSpec, unknown]>) {
    if (value === undefined) continue;
    if (POD_FIELDS_MERGED_BELOW.has(key)) continue;
    if (POD_FIELDS_PROTECTED.has(key)) {
      ignored.push(`podTemplateSpec.spec.${key}`);
      continue;
    }
    (merged as unknown as Record<string, unknown>)[key] = value;
  }
  if (nodeSelector) merged.nodeSelector = nodeSelector;
  if (tolerations) merged.tolerations = tolerations;
  if (affinity) merged.affinity = affinity;
  if (pullSecrets.length > 0) merged.imagePullSecrets = pullSecrets;
  merged.securityContext = hardenPod(spec.securityContext ?? {}, userSpec.securityContext, ignored);
  merged.volumes = mergeByKey(
    spec.volumes ?? [],
    withoutHostPaths(userSpec.volumes ?? [], ignored),
    'name',
    'podTemplateSpec.spec.volumes',
    ignored,
  );
  if (userSpec.initContainers) {
    merged.initContainers = userSpec.initContainers.map((c) => hardenSidecar(c, 'initContainers', ignored));
  }
  merged.containers = mergeContainers(
    spec.containers,
    userSpec.containers ?? [],
    overrides?.env ?? [],
    ignored,
  );
  base.spec = merged;
  return { template: base, ignored };
}

/** Fields handled one by one above. */
const POD_FIELDS_MERGED_BELOW = new Set<keyof V1PodSpec>([
  'nodeSelector',
  'tolerations',
  'affinity',
  'imagePullSecrets',
  'securityContext',
  'volumes',
  'initContainers',
  'containers',
]);

const POD_FIELDS_PROTECTED = new Set<keyof V1PodSpec>([
  'serviceAccountName',
  'serviceAccount',
  'automountServiceAccountToken',
  'hostNetwork',
  'hostPID',
  'hostIPC',
  'hostUsers',
]);

function nonEmptyMap(map: Record<string, string>): Record<string, string> | undefined {
  return Object.keys(map).length > 0 ? map : undefined;
}

function unionByName(refs: V1LocalObjectReference[]): V1LocalObjectReference[] {
  const seen = new Set<string>();
  return refs.filter((ref) => {
    const name = ref.name ?? '';
    if (name === '' || seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

type AffinityPart = Record<string, unknown>;

/** Per sub-field: the kind of affinity, then its required / preferred terms (atomic lists). */
export function mergeAffinity(
  base: V1Affinity | undefined,
  top: V1Affinity | undefined,
): V1Affinity | undefined {
  if (!base) return top;
  if (!top) return base;
  const out: Record<string, AffinityPart> = {};
  for (const kind of ['nodeAffinity', 'podAffinity', 'podAntiAffinity'] as const) {
    const merged = {
      ...(base[kind] as AffinityPart | undefined),
      ...(top[kind] as AffinityPart | undefined),
    };
    if (Object.keys(merged).length > 0) out[kind] = merged;
  }
  return out;
}

/**
 * Adds the user's items; an item with the key (`name`, or a mount's `mountPath`) of an operator
 * item is refused and reported as `path[key=value]`.
 */
function mergeByKey<T, K extends keyof T & string>(
  ours: T[],
  theirs: T[],
  key: K,
  path: string,
  ignored: string[],
): T[] {
  const taken = new Set(ours.map((item) => item[key]));
  const added = theirs.filter((item) => {
    if (!taken.has(item[key])) return true;
    ignored.push(`${path}[${key}=${String(item[key] ?? '')}]`);
    return false;
  });
  return [...ours, ...added];
}

/** Env merged by name, later lists winning, except the protected variables of the operator. */
function mergeEnv(
  ours: V1EnvVar[],
  layers: Array<{ env: V1EnvVar[]; path: string }>,
  ignored: string[],
): V1EnvVar[] {
  const byName = new Map(ours.map((e) => [e.name, e]));
  for (const { env, path } of layers) {
    for (const item of env) {
      if (isProtectedEnv(item.name) && byName.has(item.name)) {
        ignored.push(`${path}[name=${item.name}]`);
        continue;
      }
      byName.set(item.name, item);
    }
  }
  return [...byName.values()];
}

/** Container fields of the `moat` container a podTemplateSpec may set. */
const CONTAINER_FIELDS_ALLOWED = new Set<keyof V1Container>([
  'resources',
  'imagePullPolicy',
  'startupProbe',
  'livenessProbe',
  'readinessProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'envFrom',
  'resizePolicy',
]);

function mergeContainers(
  ours: V1Container[],
  theirs: V1Container[],
  overrideEnv: Array<{ name: string; value: string }>,
  ignored: string[],
): V1Container[] {
  const userProxy = theirs.find((c) => c.name === PROXY_CONTAINER);
  const sidecars = theirs
    .filter((c) => c.name !== PROXY_CONTAINER)
    .map((c) => hardenSidecar(c, 'containers', ignored));
  const containers = ours.map((container) => {
    if (container.name !== PROXY_CONTAINER) return container;
    const merged: V1Container = { ...container };
    const path = `podTemplateSpec.spec.containers[name=${PROXY_CONTAINER}]`;
    for (const [key, value] of Object.entries(userProxy ?? {}) as Array<[keyof V1Container, unknown]>) {
      if (
        value === undefined ||
        key === 'name' ||
        key === 'env' ||
        key === 'securityContext' ||
        key === 'volumeMounts'
      ) {
        continue;
      }
      if (CONTAINER_FIELDS_ALLOWED.has(key)) (merged as unknown as Record<string, unknown>)[key] = value;
      else ignored.push(`${path}.${key}`);
    }
    merged.env = mergeEnv(
      container.env ?? [],
      [
        { env: overrideEnv, path: 'resourceOverrides.proxyDeployment.env' },
        { env: userProxy?.env ?? [], path: `${path}.env` },
      ],
      ignored,
    );
    merged.volumeMounts = mergeByKey(
      container.volumeMounts ?? [],
      userProxy?.volumeMounts ?? [],
      'mountPath',
      `${path}.volumeMounts`,
      ignored,
    );
    merged.securityContext = hardenContainer(
      container.securityContext ?? {},
      userProxy?.securityContext,
      ignored,
      path,
    );
    return merged;
  });
  return [...containers, ...sidecars];
}

/** The user's pod security context with the operator's hardening put back on top. */
function hardenPod(
  ours: V1PodSecurityContext,
  theirs: V1PodSecurityContext | undefined,
  ignored: string[],
): V1PodSecurityContext {
  const merged: V1PodSecurityContext = { ...ours, ...theirs };
  const path = 'podTemplateSpec.spec.securityContext';
  if (theirs?.runAsNonRoot === false) ignored.push(`${path}.runAsNonRoot`);
  merged.runAsNonRoot = true;
  keepNonRootIdsAndSeccomp(ours, theirs, merged, path, ignored);
  return merged;
}

/**
 * Shared by the pod and container contexts: user or group 0 (root) and a seccomp profile other
 * than RuntimeDefault or Localhost (i.e. Unconfined) fall back to ours.
 */
function keepNonRootIdsAndSeccomp<C extends V1PodSecurityContext | V1SecurityContext>(
  ours: C,
  theirs: C | undefined,
  merged: C,
  path: string,
  ignored: string[],
): void {
  for (const field of ['runAsUser', 'runAsGroup'] as const) {
    if (theirs?.[field] === 0) {
      ignored.push(`${path}.${field}`);
      merged[field] = ours[field];
    }
  }
  if (
    theirs?.seccompProfile &&
    theirs.seccompProfile.type !== 'RuntimeDefault' &&
    theirs.seccompProfile.type !== 'Localhost'
  ) {
    ignored.push(`${path}.seccompProfile`);
    merged.seccompProfile = ours.seccompProfile;
  }
}

/** A host path would give the pod the node's files: refused, like the host namespaces. */
function withoutHostPaths(volumes: V1Volume[], ignored: string[]): V1Volume[] {
  return volumes.filter((v) => {
    if (!v.hostPath) return true;
    ignored.push(`podTemplateSpec.spec.volumes[name=${v.name}].hostPath`);
    return false;
  });
}

/** User containers beside the proxy may run, but not with more privilege than the proxy. */
function hardenSidecar(container: V1Container, list: string, ignored: string[]): V1Container {
  const path = `podTemplateSpec.spec.${list}[name=${container.name}]`;
  return {
    ...container,
    securityContext: hardenContainer({}, container.securityContext, ignored, path, false),
  };
}

/**
 * The user's container security context with the hardening put back. `strict` (the proxy
 * container) also forces the read-only root filesystem and drops every capability.
 */
function hardenContainer(
  ours: V1SecurityContext,
  theirs: V1SecurityContext | undefined,
  ignored: string[],
  containerPath: string,
  strict = true,
): V1SecurityContext {
  const merged: V1SecurityContext = { ...ours, ...theirs };
  const path = `${containerPath}.securityContext`;
  const forced: Partial<
    Record<'runAsNonRoot' | 'privileged' | 'allowPrivilegeEscalation' | 'readOnlyRootFilesystem', boolean>
  > = {
    runAsNonRoot: true,
    privileged: false,
    allowPrivilegeEscalation: false,
    ...(strict ? { readOnlyRootFilesystem: true } : {}),
  };
  for (const [field, value] of Object.entries(forced) as Array<[keyof typeof forced, boolean]>) {
    if (theirs?.[field] !== undefined && theirs[field] !== value) ignored.push(`${path}.${field}`);
    merged[field] = value;
  }
  if ((theirs?.capabilities?.add ?? []).length > 0) ignored.push(`${path}.capabilities.add`);
  if (strict) merged.capabilities = { drop: ['ALL'] };
  else if (merged.capabilities) merged.capabilities = { drop: merged.capabilities.drop };
  keepNonRootIdsAndSeccomp(ours, theirs, merged, path, ignored);
  if (theirs?.procMount !== undefined && theirs.procMount !== 'Default') {
    ignored.push(`${path}.procMount`);
    delete merged.procMount;
  }
  return merged;
}
