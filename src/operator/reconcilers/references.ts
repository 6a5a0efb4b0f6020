/**
 * What an MCPRemoteProxy references and where the controller finds it: one table of the `*Ref`
 * fields (kind, status hash field, condition type), the gathering of the reconcile inputs from the
 * informer cache (Secrets described by their keys only), and the reverse mapping a watch needs
 * (which proxies name this object).
 */
import {
  ALL_KINDS,
  mcpRemoteProxySpecSchema,
  type CustomResource,
  type MCPRemoteProxy,
  type MCPRemoteProxyStatus,
} from '../crd/index.js';
import type { CacheReader } from '../controller/watch.js';
import type { KubeObject, ResourceType } from '../controller/resource.js';
import type { FoundConfigMap, FoundSecret, ProxyInputs } from '../reconcile/inputs.js';
import { proxySecrets } from '../reconcile/secrets.js';
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

type Spec = MCPRemoteProxy['spec'];
type HashField = keyof Pick<
  MCPRemoteProxyStatus,
  | 'oidcConfigHash'
  | 'authzConfigHash'
  | 'externalAuthConfigHash'
  | 'authServerConfigHash'
  | 'telemetryConfigHash'
  | 'toolConfigHash'
>;
type InputField = keyof Omit<ProxyInputs, 'proxy' | 'secrets' | 'configMaps'>;

export interface ReferenceField {
  /** The spec field, for messages (`spec.oidcConfigRef`). */
  field: string;
  type: ResourceType;
  name: (spec: Spec) => string | undefined;
  /** Where the found object goes in the reconcile inputs. */
  input: InputField;
  /** The status field that records the referenced spec's hash (none for a group). */
  hash?: HashField;
  /** The condition that reports on this reference. */
  condition: string;
  /** Condition reason prefix: `<prefix>Valid`, `<prefix>NotFound`, `<prefix>NotValid`. */
  reason: string;
}

export const REFERENCE_FIELDS: readonly ReferenceField[] = [
  {
    field: 'spec.oidcConfigRef',
    type: OIDC_CONFIGS,
    name: (s) => s.oidcConfigRef?.name,
    input: 'oidcConfig',
    hash: 'oidcConfigHash',
    condition: 'OIDCConfigRefValidated',
    reason: 'OIDCConfigRef',
  },
  {
    field: 'spec.authzConfigRef',
    type: AUTHZ_CONFIGS,
    name: (s) => s.authzConfigRef?.name,
    input: 'authzConfig',
    condition: 'AuthzConfigRefValidated',
    reason: 'AuthzConfigRef',
  },
  {
    field: 'spec.externalAuthConfigRef',
    type: EXTERNAL_AUTH_CONFIGS,
    name: (s) => s.externalAuthConfigRef?.name,
    input: 'externalAuthConfig',
    hash: 'externalAuthConfigHash',
    condition: 'ExternalAuthConfigValidated',
    reason: 'ExternalAuthConfig',
  },
  {
    field: 'spec.authServerRef',
    type: EXTERNAL_AUTH_CONFIGS,
    name: (s) => s.authServerRef?.name,
    input: 'authServerConfig',
    hash: 'authServerConfigHash',
    condition: 'AuthServerRefValidated',
    reason: 'AuthServerRef',
  },
  {
    field: 'spec.telemetryConfigRef',
    type: TELEMETRY_CONFIGS,
    name: (s) => s.telemetryConfigRef?.name,
    input: 'telemetryConfig',
    hash: 'telemetryConfigHash',
    condition: 'TelemetryConfigRefValidated',
    reason: 'TelemetryConfigRef',
  },
  {
    field: 'spec.toolConfigRef',
    type: TOOL_CONFIGS,
    name: (s) => s.toolConfigRef?.name,
    input: 'toolConfig',
    hash: 'toolConfigHash',
    condition: 'ToolConfigValidated',
    reason: 'ToolConfig',
  },
  {
    field: 'spec.groupRef',
    type: GROUPS,
    name: (s) => s.groupRef?.name,
    input: 'group',
    condition: 'GroupRefValidated',
    reason: 'GroupRef',
  },
];

/** The referenced kinds, each once. */
export const REFERENCED_TYPES: readonly ResourceType[] = [
  ...new Map(REFERENCE_FIELDS.map((r) => [r.type.kind, r.type])).values(),
];

const specSchemas = new Map(ALL_KINDS.map((k) => [k.kind, k.spec]));

/** A stored custom object with its spec parsed (defaults applied), or the parse problem. */
export function parseCustom<T extends CustomResource<unknown, unknown>>(
  obj: KubeObject,
): { ok: true; value: T } | { ok: false; message: string } {
  const schema = obj.kind ? specSchemas.get(obj.kind) : undefined;
  if (!schema) return { ok: false, message: `unknown kind ${obj.kind ?? '(none)'}` };
  const parsed = schema.safeParse(obj.spec ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? `spec.${issue.path.join('.')}` : 'spec';
    return { ok: false, message: `${at}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, value: { ...obj, spec: parsed.data } as unknown as T };
}

/** The proxy's spec as stored, parsed; undefined with a message when it does not parse. */
export function parseProxy(
  obj: KubeObject,
): { ok: true; value: MCPRemoteProxy } | { ok: false; message: string } {
  const parsed = mcpRemoteProxySpecSchema.safeParse(obj.spec ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? `spec.${issue.path.join('.')}` : 'spec';
    return { ok: false, message: `${at}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, value: { ...obj, spec: parsed.data } as unknown as MCPRemoteProxy };
}

/** One `*Ref` of a proxy as found in the cache. */
export interface ReferenceObservation {
  ref: ReferenceField;
  name: string;
  /** The stored object, when it exists. */
  found?: KubeObject;
  /** Its spec parsed, when it exists and parses. */
  parsed?: CustomResource<unknown, unknown>;
  /** Why it cannot be used, when it cannot. */
  problem?: { reason: string; message: string };
}

function observeReference(
  cache: CacheReader,
  ref: ReferenceField,
  name: string,
  namespace: string,
): ReferenceObservation {
  const found = cache.get(ref.type, name, namespace);
  if (!found) {
    return {
      ref,
      name,
      problem: {
        reason: `${ref.reason}NotFound`,
        message: `${ref.field}: ${ref.type.kind} ${name} not found in namespace ${namespace}`,
      },
    };
  }
  const conditions = (found.status as { conditions?: { type: string; status: string; message?: string }[] })
    ?.conditions;
  const valid = conditions?.find((c) => c.type === 'Valid');
  if (valid?.status === 'False') {
    return {
      ref,
      name,
      found,
      problem: {
        reason: `${ref.reason}NotValid`,
        message: `${ref.field}: ${ref.type.kind} ${name} is not valid: ${valid.message ?? ''}`.trim(),
      },
    };
  }
  const parsed = parseCustom(found);
  if (!parsed.ok) {
    return {
      ref,
      name,
      found,
      problem: {
        reason: `${ref.reason}NotValid`,
        message: `${ref.field}: ${ref.type.kind} ${name} is not valid: ${parsed.message}`,
      },
    };
  }
  return { ref, name, found, parsed: parsed.value };
}

export interface GatheredInputs {
  inputs: ProxyInputs;
  references: ReferenceObservation[];
}

/** The proxy's inputs from the cache: usable referenced objects, and the Secrets and ConfigMaps they name. */
export function gatherInputs(proxy: MCPRemoteProxy, cache: CacheReader): GatheredInputs {
  const namespace = proxy.metadata.namespace ?? '';
  const references: ReferenceObservation[] = [];
  const inputs: ProxyInputs = { proxy, secrets: {}, configMaps: {} };
  for (const ref of REFERENCE_FIELDS) {
    const name = ref.name(proxy.spec);
    if (name === undefined) continue;
    const observation = observeReference(cache, ref, name, namespace);
    references.push(observation);
    if (observation.parsed) Object.assign(inputs, { [ref.input]: observation.parsed });
  }
  for (const name of referencedSecretNames(inputs)) {
    const secret = cache.get(SECRETS, name, namespace);
    if (secret) inputs.secrets[name] = describeSecret(secret);
  }
  for (const name of referencedConfigMapNames(inputs)) {
    const configMap = cache.get(CONFIG_MAPS, name, namespace);
    if (configMap) inputs.configMaps[name] = describeConfigMap(configMap);
  }
  return { inputs, references };
}

/** Keys and version only: a Secret's values never leave the cache. */
function describeSecret(secret: KubeObject): FoundSecret {
  const data = (secret.data ?? {}) as Record<string, unknown>;
  const stringData = (secret.stringData ?? {}) as Record<string, unknown>;
  return {
    keys: [...new Set([...Object.keys(data), ...Object.keys(stringData)])],
    resourceVersion: secret.metadata?.resourceVersion,
  };
}

function describeConfigMap(configMap: KubeObject): FoundConfigMap {
  const data = (configMap.data ?? {}) as Record<string, string>;
  const binary = Object.fromEntries(Object.keys((configMap.binaryData ?? {})).map((k) => [k, '']));
  return { data: { ...binary, ...data }, resourceVersion: configMap.metadata?.resourceVersion };
}

export function referencedSecretNames(inputs: ProxyInputs): string[] {
  return [...new Set(proxySecrets(inputs).map((s) => s.ref.name))];
}

/** ConfigMaps the proxy's pod or RunConfig reads: the authz file and the CA bundles. */
export function referencedConfigMapNames(inputs: ProxyInputs): string[] {
  return [...new Set(configMapRefs(inputs).map((r) => r.ref.name))];
}

export interface ConfigMapRef {
  field: string;
  ref: { name: string; key: string };
}

export function configMapRefs(inputs: ProxyInputs): ConfigMapRef[] {
  const { spec } = inputs.proxy;
  const out: ConfigMapRef[] = [];
  if (spec.authzConfig?.type === 'configMap' && spec.authzConfig.configMap) {
    out.push({ field: 'spec.authzConfig.configMap', ref: spec.authzConfig.configMap });
  }
  const oidcCa = spec.oidcConfigRef ? inputs.oidcConfig?.spec.inline?.caBundleRef : undefined;
  if (oidcCa) {
    out.push({ field: `MCPOIDCConfig ${spec.oidcConfigRef?.name ?? ''} inline.caBundleRef`, ref: oidcCa });
  }
  const otelCa = spec.telemetryConfigRef
    ? inputs.telemetryConfig?.spec.openTelemetry?.caBundleRef
    : undefined;
  if (otelCa) {
    out.push({
      field: `MCPTelemetryConfig ${spec.telemetryConfigRef?.name ?? ''} openTelemetry.caBundleRef`,
      ref: otelCa,
    });
  }
  return out;
}

/** The proxies in `obj`'s namespace whose references include `obj` (for a watch's key mapping). */
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

/** The names of objects of `type` that `proxy` references. */
export function proxyNames(proxy: MCPRemoteProxy, type: ResourceType, cache: CacheReader): string[] {
  if (type.kind === SECRETS.kind || type.kind === CONFIG_MAPS.kind) {
    const { inputs } = gatherInputs(proxy, cache);
    return type.kind === SECRETS.kind ? referencedSecretNames(inputs) : referencedConfigMapNames(inputs);
  }
  return REFERENCE_FIELDS.filter((r) => r.type.kind === type.kind)
    .map((r) => r.name(proxy.spec))
    .filter((n): n is string => n !== undefined);
}
