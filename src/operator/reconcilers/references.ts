/**
 * What an MCPRemoteProxy references, read from the informer cache: the objects its `*Ref` fields
 * name, then the Secrets (described by their keys only) and ConfigMaps those name, as the pure
 * reconcile core's `ProxyInputs`. The reverse mapping (which proxies name this object) drives the
 * watches, so a change to any referenced object re-reconciles the proxies that use it.
 */
import type { CacheReader } from '../controller/watch.js';
import type { KubeObject, ResourceType } from '../controller/resource.js';
import { ALL_KINDS, mcpRemoteProxySpecSchema, type MCPRemoteProxy } from '../crd/index.js';
import {
  referencedConfigMapNames,
  referencedObjects,
  referencedSecretNames,
  type FoundConfigMap,
  type FoundSecret,
  type ProxyInputs,
  type ReferencedNames,
} from '../reconcile/index.js';
import {
  AUTHZ_CONFIGS,
  CONFIG_MAPS,
  EXTERNAL_AUTH_CONFIGS,
  GROUPS,
  OIDC_CONFIGS,
  REMOTE_PROXIES,
  SECRETS,
  TELEMETRY_CONFIGS,
  TOOL_CONFIGS,
} from './kinds.js';

type RefField = keyof ReferencedNames;

/** The `*Ref` names of a proxy, by the `ProxyInputs` field they fill. */
function references(proxy: MCPRemoteProxy): [RefField, string][] {
  return Object.entries(referencedObjects(proxy.spec)) as [RefField, string][];
}

/** The kind behind each `ProxyInputs` field a `*Ref` fills. */
const INPUT_TYPES: Record<RefField, ResourceType> = {
  oidcConfig: OIDC_CONFIGS,
  authzConfig: AUTHZ_CONFIGS,
  externalAuthConfig: EXTERNAL_AUTH_CONFIGS,
  authServerConfig: EXTERNAL_AUTH_CONFIGS,
  telemetryConfig: TELEMETRY_CONFIGS,
  toolConfig: TOOL_CONFIGS,
  group: GROUPS,
};

/** The referenced kinds, each once. */
export const REFERENCED_TYPES: readonly ResourceType[] = [
  ...new Map(Object.values(INPUT_TYPES).map((t) => [t.kind, t])).values(),
];

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function parseWith<T>(schema: { safeParse: (v: unknown) => unknown }, obj: KubeObject): Parsed<T> {
  const result = schema.safeParse(obj.spec ?? {}) as
    | { success: true; data: unknown }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  if (!result.success) {
    const issue = result.error.issues[0];
    const at = issue?.path.length ? `spec.${issue.path.map(String).join('.')}` : 'spec';
    return { ok: false, message: `${at}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, value: { ...obj, spec: result.data } as T };
}

const specSchemas = new Map(ALL_KINDS.map((k) => [k.kind, k.spec]));

/** A stored custom object with its spec parsed by its kind's schema (defaults applied). */
export function parseCustom<T>(obj: KubeObject): Parsed<T> {
  const schema = obj.kind ? specSchemas.get(obj.kind) : undefined;
  if (!schema) return { ok: false, message: `unknown kind ${obj.kind ?? '(none)'}` };
  return parseWith<T>(schema, obj);
}

export function parseProxy(obj: KubeObject): Parsed<MCPRemoteProxy> {
  return parseWith<MCPRemoteProxy>(mcpRemoteProxySpecSchema, obj);
}

/**
 * The proxy's inputs from the cache. A referenced object whose spec does not parse is passed as
 * stored: its own controller marks it Valid=False, which the proxy's check reports.
 */
export function gatherInputs(proxy: MCPRemoteProxy, cache: CacheReader): ProxyInputs {
  const namespace = proxy.metadata.namespace ?? '';
  const inputs: ProxyInputs = { proxy, secrets: {}, configMaps: {} };
  for (const [field, name] of references(proxy)) {
    const found = cache.get(INPUT_TYPES[field], name, namespace);
    if (!found) continue;
    const parsed = parseCustom(found);
    Object.assign(inputs, { [field]: parsed.ok ? parsed.value : found });
  }
  for (const name of referencedSecretNames(inputs)) {
    const secret = cache.get(SECRETS, name, namespace);
    if (secret) inputs.secrets[name] = describeSecret(secret);
  }
  for (const name of referencedConfigMapNames(inputs)) {
    const configMap = cache.get(CONFIG_MAPS, name, namespace);
    if (configMap) inputs.configMaps[name] = describeConfigMap(configMap);
  }
  return inputs;
}

/** Keys and version only: a Secret's values never leave the cache. */
function describeSecret(secret: KubeObject): FoundSecret {
  const data = (secret.data ?? {}) as Record<string, unknown>;
  return { keys: Object.keys(data), resourceVersion: secret.metadata?.resourceVersion };
}

function describeConfigMap(configMap: KubeObject): FoundConfigMap {
  const data = (configMap.data ?? {}) as Record<string, string>;
  const binary = Object.fromEntries(Object.keys(configMap.binaryData ?? {}).map((k) => [k, '']));
  return { data: { ...binary, ...data }, resourceVersion: configMap.metadata?.resourceVersion };
}

/** The names of objects of `type` that `proxy` references. */
export function proxyNames(proxy: MCPRemoteProxy, type: ResourceType, cache: CacheReader): string[] {
  if (type.kind === SECRETS.kind || type.kind === CONFIG_MAPS.kind) {
    const inputs = gatherInputs(proxy, cache);
    return type.kind === SECRETS.kind ? referencedSecretNames(inputs) : referencedConfigMapNames(inputs);
  }
  return references(proxy)
    .filter(([field]) => INPUT_TYPES[field].kind === type.kind)
    .map(([, name]) => name);
}

/** The keys of the proxies in `obj`'s namespace that reference `obj` (a watch's key mapping). */
export function proxiesReferencing(type: ResourceType, obj: KubeObject, cache: CacheReader): string[] {
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name;
  if (!namespace || !name) return [];
  const keys: string[] = [];
  for (const stored of cache.list(REMOTE_PROXIES, namespace)) {
    const proxy = parseProxy(stored);
    if (proxy.ok && proxyNames(proxy.value, type, cache).includes(name)) {
      keys.push(`${namespace}/${proxy.value.metadata.name ?? ''}`);
    }
  }
  return keys;
}
