/**
 * Every check made before the proxy's objects are built, one result per status condition. A
 * blocking check that is False makes the phase Failed and nothing is applied; Unknown (a
 * referenced object not validated yet by its own controller) keeps the phase Pending. Advisory
 * results only inform.
 */
import { forwardHeaderNameProblem } from '../../config/header-names.js';
import type { ConfigStatus, CustomResource, HeaderForward } from '../crd/index.js';
import { cedarProblem, resolveAuthz } from './authz.js';
import type { ProxyInputs } from './inputs.js';
import { checkRemoteUrl } from './remote-url.js';
import { proxySecrets, type ProxySecret } from './secrets.js';
import { isObject } from '../../util/is-object.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface CheckResult {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  /** Whether a result other than True stops the build. */
  blocking: boolean;
}

export const CONDITION = {
  ready: 'Ready',
  remoteUrl: 'RemoteURLValid',
  authzConfig: 'AuthzConfigValid',
  authzConfigRef: 'AuthzConfigRefValid',
  oidcConfigRef: 'OIDCConfigRefValid',
  externalAuthConfigRef: 'ExternalAuthConfigRefValid',
  authServerRef: 'AuthServerRefValid',
  telemetryConfigRef: 'TelemetryConfigRefValid',
  toolConfigRef: 'ToolConfigRefValid',
  groupRef: 'GroupRefValid',
  podTemplateSpec: 'PodTemplateSpecValid',
  secrets: 'SecretsFound',
  headerForward: 'HeaderForwardValid',
  redisCa: 'RedisCASecretFound',
  sessionStorageWarning: 'SessionStorageWarning',
  primaryUpstreamProviderIgnored: 'AuthzPrimaryUpstreamProviderIgnored',
} as const;

export function validateProxy(inputs: ProxyInputs): CheckResult[] {
  const { spec } = inputs.proxy;
  const results: CheckResult[] = [checkRemote(inputs)];
  const add = (result: CheckResult | undefined) => {
    if (result) results.push(result);
  };
  add(checkInlineAuthz(inputs));
  add(
    spec.authzConfigRef &&
      checkRef(
        inputs,
        CONDITION.authzConfigRef,
        'MCPAuthzConfig',
        'AuthzConfigRef',
        spec.authzConfigRef.name,
        inputs.authzConfig,
      ),
  );
  add(spec.oidcConfigRef && checkOidc(inputs, spec.oidcConfigRef.name));
  add(spec.externalAuthConfigRef && checkExternalAuth(inputs, spec.externalAuthConfigRef.name));
  add(spec.authServerRef && checkAuthServer(inputs, spec.authServerRef.name));
  add(spec.telemetryConfigRef && checkTelemetry(inputs, spec.telemetryConfigRef.name));
  add(
    spec.toolConfigRef &&
      checkRef(
        inputs,
        CONDITION.toolConfigRef,
        'MCPToolConfig',
        'ToolConfigRef',
        spec.toolConfigRef.name,
        inputs.toolConfig,
      ),
  );
  add(
    spec.groupRef &&
      checkRef(inputs, CONDITION.groupRef, 'MCPGroup', 'GroupRef', spec.groupRef.name, inputs.group),
  );
  add(spec.podTemplateSpec && checkPodTemplateSpec(spec.podTemplateSpec));
  add(spec.headerForward && checkHeaderForward(spec.headerForward));
  add(checkSecrets(inputs));
  add(checkRedisCa(inputs));
  add(sessionStorageWarning(inputs));
  add(primaryUpstreamProviderIgnored(inputs));
  return results;
}

const ok = (type: string, reason: string, message: string): CheckResult => ({
  type,
  status: 'True',
  reason,
  message,
  blocking: true,
});
const fail = (type: string, reason: string, message: string): CheckResult => ({
  type,
  status: 'False',
  reason,
  message,
  blocking: true,
});

function namespaceOf(inputs: ProxyInputs): string {
  return inputs.proxy.metadata.namespace ?? '';
}

function checkRemote(inputs: ProxyInputs): CheckResult {
  const { remoteUrl, allowPrivateEndpoint } = inputs.proxy.spec;
  const problem = checkRemoteUrl(remoteUrl, { allowPrivateEndpoint });
  return problem
    ? fail(CONDITION.remoteUrl, 'RemoteURLBlocked', problem)
    : ok(CONDITION.remoteUrl, 'RemoteURLAllowed', `spec.remoteUrl ${remoteUrl} is allowed`);
}

/** `spec.authzConfig` (inline or ConfigMap): the source exists and Cedar parses the policies. */
function checkInlineAuthz(inputs: ProxyInputs): CheckResult | undefined {
  if (!inputs.proxy.spec.authzConfig) return undefined;
  const resolved = resolveAuthz(inputs);
  if (!resolved) return undefined;
  if (!resolved.ok) return fail(CONDITION.authzConfig, resolved.reason, resolved.message);
  const problem = cedarProblem(resolved.config, 'spec.authzConfig');
  return problem
    ? fail(CONDITION.authzConfig, 'AuthzPolicySyntaxInvalid', problem)
    : ok(
        CONDITION.authzConfig,
        'AuthzConfigValid',
        `spec.authzConfig: ${resolved.config.cedar.policies.length} Cedar policies parse`,
      );
}

/**
 * A referenced object: it exists in the proxy's namespace and its own controller found it Valid
 * for its current generation.
 */
function checkRef(
  inputs: ProxyInputs,
  type: string,
  kind: string,
  reasonPrefix: string,
  name: string,
  found: CustomResource<unknown, ConfigStatus> | undefined,
): CheckResult {
  if (!found) {
    return fail(
      type,
      `${reasonPrefix}NotFound`,
      `${kind} ${name} not found in namespace ${namespaceOf(inputs)}`,
    );
  }
  const valid = found.status?.conditions?.find((c) => c.type === 'Valid');
  const current =
    valid !== undefined &&
    (valid.observedGeneration === undefined || valid.observedGeneration === found.metadata.generation);
  if (valid?.status === 'False' && current) {
    return fail(type, `${reasonPrefix}NotValid`, `${kind} ${name} is not valid: ${valid.message}`);
  }
  if (valid?.status !== 'True' || !current) {
    return {
      type,
      status: 'Unknown',
      reason: `${reasonPrefix}NotValidatedYet`,
      message: `${kind} ${name} has not been validated yet`,
      blocking: true,
    };
  }
  return ok(type, `${reasonPrefix}Valid`, `${kind} ${name} is valid`);
}

/** The CA bundle ConfigMap a referenced config names (its pod volume is not optional). */
function caBundleProblem(
  inputs: ProxyInputs,
  owner: string,
  ref: { name: string; key: string } | undefined,
): string | undefined {
  if (!ref) return undefined;
  const configMap = inputs.configMaps[ref.name];
  if (!configMap)
    return `${owner} caBundleRef: ConfigMap ${ref.name} not found in namespace ${namespaceOf(inputs)}`;
  if (configMap.data[ref.key] === undefined)
    return `${owner} caBundleRef: ConfigMap ${ref.name} has no key ${ref.key}`;
  return undefined;
}

function withCaBundle(result: CheckResult, problem: string | undefined): CheckResult {
  if (result.status !== 'True' || !problem) return result;
  return fail(result.type, 'CABundleNotFound', problem);
}

function checkOidc(inputs: ProxyInputs, name: string): CheckResult {
  const result = checkRef(
    inputs,
    CONDITION.oidcConfigRef,
    'MCPOIDCConfig',
    'OIDCConfigRef',
    name,
    inputs.oidcConfig,
  );
  return withCaBundle(
    result,
    caBundleProblem(inputs, `MCPOIDCConfig ${name}`, inputs.oidcConfig?.spec.inline?.caBundleRef),
  );
}

function checkTelemetry(inputs: ProxyInputs, name: string): CheckResult {
  const result = checkRef(
    inputs,
    CONDITION.telemetryConfigRef,
    'MCPTelemetryConfig',
    'TelemetryConfigRef',
    name,
    inputs.telemetryConfig,
  );
  const caRef = inputs.telemetryConfig?.spec.openTelemetry?.caBundleRef;
  return withCaBundle(result, caBundleProblem(inputs, `MCPTelemetryConfig ${name}`, caRef));
}

function checkExternalAuth(inputs: ProxyInputs, name: string): CheckResult {
  const type = CONDITION.externalAuthConfigRef;
  const result = checkRef(
    inputs,
    type,
    'MCPExternalAuthConfig',
    'ExternalAuthConfigRef',
    name,
    inputs.externalAuthConfig,
  );
  const injected = inputs.externalAuthConfig?.spec.headerInjection?.headerName;
  if (result.status !== 'True' || inputs.externalAuthConfig?.spec.type !== 'headerInjection' || !injected)
    return result;
  // The injected header becomes a forwarded header, so the proxy's rule on names applies to it.
  const problem = forwardHeaderNameProblem(injected);
  if (problem) {
    return fail(
      type,
      'HeaderNotAllowed',
      `MCPExternalAuthConfig ${name} headerInjection.headerName: ${problem}`,
    );
  }
  const forward = inputs.proxy.spec.headerForward;
  const taken = [
    ...Object.keys(forward?.addPlaintextHeaders ?? {}),
    ...(forward?.addHeadersFromSecret ?? []).map((h) => h.headerName),
  ];
  if (taken.some((h) => h.toLowerCase() === injected.toLowerCase())) {
    return fail(
      type,
      'HeaderConflict',
      `MCPExternalAuthConfig ${name} injects header ${injected}, which spec.headerForward also sets; keep one of them`,
    );
  }
  return result;
}

/** The proxy refuses these header names at start, so a pod built with one would crash-loop. */
function checkHeaderForward(forward: HeaderForward): CheckResult {
  const named = [
    ...Object.keys(forward.addPlaintextHeaders ?? {}).map((h) => [h, 'addPlaintextHeaders'] as const),
    ...(forward.addHeadersFromSecret ?? []).map((h) => [h.headerName, 'addHeadersFromSecret'] as const),
  ];
  for (const [header, field] of named) {
    const problem = forwardHeaderNameProblem(header);
    if (problem)
      return fail(CONDITION.headerForward, 'HeaderNotAllowed', `spec.headerForward.${field}: ${problem}`);
  }
  return ok(CONDITION.headerForward, 'HeaderNamesAllowed', 'every forwarded header name is allowed');
}

/** Moat has no embedded authorization server, so no MCPExternalAuthConfig can serve authServerRef. */
function checkAuthServer(inputs: ProxyInputs, name: string): CheckResult {
  const type = CONDITION.authServerRef;
  if (!inputs.authServerConfig) {
    return fail(
      type,
      'AuthServerRefNotFound',
      `MCPExternalAuthConfig ${name} not found in namespace ${namespaceOf(inputs)}`,
    );
  }
  return fail(
    type,
    'AuthServerRefNotSupported',
    `spec.authServerRef needs an embedded authorization server (type embeddedAuthServer), which moat does not implement; ` +
      `MCPExternalAuthConfig ${name} has type ${inputs.authServerConfig.spec.type}. Remove authServerRef and validate incoming tokens with oidcConfigRef`,
  );
}

function checkPodTemplateSpec(template: Record<string, unknown>): CheckResult {
  const type = CONDITION.podTemplateSpec;
  const problem = podTemplateShapeProblem(template);
  return problem
    ? fail(type, 'PodTemplateSpecInvalid', `spec.podTemplateSpec${problem}`)
    : ok(type, 'PodTemplateSpecValid', 'spec.podTemplateSpec is valid');
}

function isStringMap(value: unknown): boolean {
  return isObject(value) && Object.values(value).every((v) => typeof v === 'string');
}

/** The parts the merge reads must have their Kubernetes shapes (the CRD keeps the field free-form). */
function podTemplateShapeProblem(template: Record<string, unknown>): string | undefined {
  const { metadata, spec } = template;
  if (metadata !== undefined) {
    if (!isObject(metadata)) return '.metadata must be an object';
    for (const key of ['labels', 'annotations'] as const) {
      if (metadata[key] !== undefined && !isStringMap(metadata[key]))
        return `.metadata.${key} must map strings to strings`;
    }
  }
  if (spec === undefined) return undefined;
  if (!isObject(spec)) return '.spec must be an object';
  if (spec.nodeSelector !== undefined && !isStringMap(spec.nodeSelector)) {
    return '.spec.nodeSelector must map strings to strings';
  }
  for (const key of ['tolerations', 'imagePullSecrets', 'volumes', 'containers', 'initContainers'] as const) {
    const list = spec[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every(isObject)) return `.spec.${key} must be a list of objects`;
  }
  for (const key of ['containers', 'initContainers', 'volumes'] as const) {
    const list = (spec[key] ?? []) as Array<Record<string, unknown>>;
    const index = list.findIndex((item) => typeof item.name !== 'string' || item.name === '');
    if (index >= 0) return `.spec.${key}[${index}].name is required`;
  }
  for (const container of (spec.containers ?? []) as Array<Record<string, unknown>>) {
    if (container.env !== undefined && (!Array.isArray(container.env) || !container.env.every(isObject))) {
      return `.spec.containers[name=${String(container.name)}].env must be a list of objects`;
    }
  }
  if (spec.affinity !== undefined && !isObject(spec.affinity)) return '.spec.affinity must be an object';
  return undefined;
}

function secretProblem(inputs: ProxyInputs, secret: ProxySecret): string | undefined {
  const found = inputs.secrets[secret.ref.name];
  if (!found)
    return `Secret ${secret.ref.name} (${secret.field}) not found in namespace ${namespaceOf(inputs)}`;
  if (!found.keys.includes(secret.ref.key))
    return `Secret ${secret.ref.name} has no key ${secret.ref.key} (${secret.field})`;
  return undefined;
}

/** Every Secret key the pod reads through env; absent when there is none. */
function checkSecrets(inputs: ProxyInputs): CheckResult | undefined {
  const secrets = proxySecrets(inputs).filter((s) => s.purpose !== 'Redis CA certificate');
  if (secrets.length === 0) return undefined;
  const problems = secrets.map((s) => secretProblem(inputs, s)).filter((p) => p !== undefined);
  return problems.length > 0
    ? fail(CONDITION.secrets, 'SecretNotFound', problems.join('; '))
    : ok(CONDITION.secrets, 'SecretsFound', `all ${secrets.length} referenced Secret keys exist`);
}

/**
 * The Redis CA is a non-optional volume: a missing Secret keeps the pods in ContainerCreating
 * (spec §7), never connecting without verification. Reported, not blocking.
 */
function checkRedisCa(inputs: ProxyInputs): CheckResult | undefined {
  const ca = proxySecrets(inputs).find((s) => s.purpose === 'Redis CA certificate');
  if (!ca) return undefined;
  const problem = secretProblem(inputs, ca);
  return {
    type: CONDITION.redisCa,
    status: problem ? 'False' : 'True',
    reason: problem ? 'SecretNotFound' : 'SecretFound',
    message: problem
      ? `${problem}; the proxy pods stay in ContainerCreating until it exists`
      : `Secret ${ca.ref.name} holds the Redis CA certificate`,
    blocking: false,
  };
}

/** Spec §4.3 rules 3–6: several replicas need shared (Redis) sessions and no client-IP affinity. */
function sessionStorageWarning(inputs: ProxyInputs): CheckResult {
  const { replicas, sessionStorage, sessionAffinity } = inputs.proxy.spec;
  const advisory = (status: ConditionStatus, reason: string, message: string): CheckResult => ({
    type: CONDITION.sessionStorageWarning,
    status,
    reason,
    message,
    blocking: false,
  });
  if (replicas === undefined || replicas <= 1) {
    return advisory(
      'False',
      'SessionStorageWarningNotApplicable',
      'at most one replica: sessions need no sharing',
    );
  }
  if (sessionStorage?.provider !== 'redis') {
    return advisory(
      'True',
      'SessionStorageMissingForReplicas',
      `replicas is ${replicas} but sessionStorage.provider is not redis: each pod keeps its own sessions, ` +
        'so a request that reaches another pod fails with "Session not found"; configure redis session storage',
    );
  }
  if (sessionAffinity !== 'None') {
    return advisory(
      'True',
      'SessionAffinityNotNone',
      `replicas is ${replicas} with redis session storage but sessionAffinity is ${sessionAffinity}: ` +
        'set sessionAffinity: None so requests spread across the replicas',
    );
  }
  return advisory('False', 'SessionStorageConfigured', 'redis session storage is shared by the replicas');
}

function primaryUpstreamProviderIgnored(inputs: ProxyInputs): CheckResult | undefined {
  const provider = inputs.proxy.spec.authzConfig?.inline?.primaryUpstreamProvider;
  if (!provider) return undefined;
  return {
    type: CONDITION.primaryUpstreamProviderIgnored,
    status: 'True',
    reason: 'PrimaryUpstreamProviderIgnored',
    message: `spec.authzConfig.inline.primaryUpstreamProvider (${provider}) has no effect on MCPRemoteProxy: there is no embedded authorization server; remove it`,
    blocking: false,
  };
}
