/**
 * Which kind of object a controller reads or writes, and where it lives on the API server. The
 * caller names the plural itself, so no discovery request is needed and the machinery works the same
 * for built-in kinds and our own CRDs.
 */
export interface ResourceType {
  /** `v1` for the core group, else `group/version`, e.g. `apps/v1`. */
  apiVersion: string;
  kind: string;
  /** The URL segment, e.g. `configmaps`. */
  plural: string;
  namespaced: boolean;
}

/** The fields of an object this machinery reads; every Kubernetes object has them. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
}

export const CONFIG_MAPS: ResourceType = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};
export const SECRETS: ResourceType = {
  apiVersion: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
};
export const EVENTS: ResourceType = { apiVersion: 'v1', kind: 'Event', plural: 'events', namespaced: true };
export const DEPLOYMENTS: ResourceType = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
};
export const LEASES: ResourceType = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};

/** `/api/v1/namespaces/ns/configmaps`; without a namespace, the cluster-wide collection. */
export function collectionPath(type: ResourceType, namespace?: string): string {
  const root = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  const scope = type.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${root}${scope}/${type.plural}`;
}

export function objectPath(type: ResourceType, namespace: string | undefined, name: string): string {
  if (type.namespaced && !namespace) throw new Error(`a ${type.kind} needs metadata.namespace`);
  return `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
}

/** The work-queue key of an object: `namespace/name`, or `name` for a cluster-scoped one. */
export function objectKey(obj: KubeObject): string {
  const { name, namespace } = obj.metadata ?? {};
  if (!name) throw new Error('object has no metadata.name');
  return namespace ? `${namespace}/${name}` : name;
}

export function parseKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
