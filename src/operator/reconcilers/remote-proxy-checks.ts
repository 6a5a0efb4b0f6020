/**
 * What the MCPRemoteProxy reconciler checks before it changes anything, as conditions: one per
 * check (False names the field and what is wrong), plus the two advisory conditions of spec §4.3
 * and §6. Pure: everything comes from the gathered inputs.
 */
import type { MCPRemoteProxy } from '../crd/index.js';
import { cedarProblem, resolveAuthz } from '../reconcile/authz.js';
import { configHash } from '../reconcile/hash.js';
import type { ProxyInputs } from '../reconcile/inputs.js';
import { checkRemoteUrl } from '../reconcile/remote-url.js';
import { proxySecrets } from '../reconcile/secrets.js';
import type { ConditionInput } from './conditions.js';
import { configMapRefs, type GatheredInputs } from './references.js';

export interface CheckResult {
  /** Every check, passed or not, as a condition. */
  conditions: ConditionInput[];
  /** The failed checks (status False), in order. */
  problems: ConditionInput[];
  /** The `*ConfigHash` status fields of the references that resolved. */
  hashes: Record<string, string>;
}

export function checkProxy({ inputs, references }: GatheredInputs): CheckResult {
  const conditions: ConditionInput[] = [
    remoteUrlCondition(inputs.proxy),
    ...references.map(({ ref, name, problem }) =>
      problem
        ? { type: ref.condition, status: 'False' as const, ...problem }
        : {
            type: ref.condition,
            status: 'True' as const,
            reason: `${ref.reason}Valid`,
            message: `${ref.type.kind} ${name} is valid`,
          },
    ),
    secretsCondition(inputs),
    configMapsCondition(inputs),
    authzCondition(inputs),
  ].filter((c): c is ConditionInput => c !== undefined);
  const hashes: Record<string, string> = {};
  for (const { ref, parsed } of references) {
    if (ref.hash && parsed) hashes[ref.hash] = configHash(parsed.spec);
  }
  const authz = resolveAuthz(inputs);
  if (authz?.ok) hashes.authzConfigHash = configHash(authz.config);
  return {
    conditions: [...conditions, ...advisoryConditions(inputs.proxy)],
    problems: conditions.filter((c) => c.status === 'False'),
    hashes,
  };
}

function remoteUrlCondition(proxy: MCPRemoteProxy): ConditionInput {
  const problem = checkRemoteUrl(proxy.spec.remoteUrl, {
    allowPrivateEndpoint: proxy.spec.allowPrivateEndpoint,
  });
  return problem
    ? { type: 'RemoteURLValidated', status: 'False', reason: 'RemoteURLNotAllowed', message: problem }
    : { type: 'RemoteURLValidated', status: 'True', reason: 'RemoteURLAllowed', message: '' };
}

/** Every Secret key the pod reads must exist, or the pod would fail to start (or start without it). */
function secretsCondition(inputs: ProxyInputs): ConditionInput | undefined {
  const secrets = proxySecrets(inputs);
  if (secrets.length === 0) return undefined;
  const namespace = inputs.proxy.metadata.namespace ?? '';
  for (const { ref, field } of secrets) {
    const found = inputs.secrets[ref.name];
    if (!found) {
      return {
        type: 'SecretsValidated',
        status: 'False',
        reason: 'SecretNotFound',
        message: `${field}: Secret ${ref.name} not found in namespace ${namespace}`,
      };
    }
    if (!found.keys.includes(ref.key)) {
      return {
        type: 'SecretsValidated',
        status: 'False',
        reason: 'SecretKeyNotFound',
        message: `${field}: Secret ${ref.name} has no key ${ref.key}`,
      };
    }
  }
  return { type: 'SecretsValidated', status: 'True', reason: 'SecretsFound', message: '' };
}

function configMapsCondition(inputs: ProxyInputs): ConditionInput | undefined {
  // The authz ConfigMap is reported by the authz check, with its parse result.
  const refs = configMapRefs(inputs).filter((r) => r.field !== 'spec.authzConfig.configMap');
  if (refs.length === 0) return undefined;
  const namespace = inputs.proxy.metadata.namespace ?? '';
  for (const { ref, field } of refs) {
    const found = inputs.configMaps[ref.name];
    if (!found || !(ref.key in found.data)) {
      return {
        type: 'CABundleRefValidated',
        status: 'False',
        reason: found ? 'CABundleKeyNotFound' : 'CABundleRefNotFound',
        message: found
          ? `${field}: ConfigMap ${ref.name} has no key ${ref.key}`
          : `${field}: ConfigMap ${ref.name} not found in namespace ${namespace}`,
      };
    }
  }
  return { type: 'CABundleRefValidated', status: 'True', reason: 'CABundleRefValid', message: '' };
}

/** Inline policies and the ConfigMap's file are checked by the Cedar engine itself. */
function authzCondition(inputs: ProxyInputs): ConditionInput | undefined {
  const authz = resolveAuthz(inputs);
  if (!authz) return undefined;
  if (!authz.ok) {
    return { type: 'AuthzConfigValidated', status: 'False', reason: authz.reason, message: authz.message };
  }
  const source = inputs.proxy.spec.authzConfigRef
    ? `MCPAuthzConfig ${inputs.proxy.spec.authzConfigRef.name}`
    : 'spec.authzConfig';
  const problem = cedarProblem(authz.config, source);
  return problem
    ? {
        type: 'AuthzConfigValidated',
        status: 'False',
        reason: 'AuthzPolicyInvalid',
        message: `${source}: ${problem}`,
      }
    : { type: 'AuthzConfigValidated', status: 'True', reason: 'AuthzConfigValid', message: '' };
}

/** Advice that never blocks: spec §4.3 (sessions across replicas) and §6 (an ignored field). */
export function advisoryConditions(proxy: MCPRemoteProxy): ConditionInput[] {
  const { replicas, sessionStorage, sessionAffinity, authzConfig } = proxy.spec;
  const out: ConditionInput[] = [sessionStorageWarning(replicas, sessionStorage?.provider, sessionAffinity)];
  const provider = authzConfig?.inline?.primaryUpstreamProvider;
  if (provider) {
    out.push({
      type: 'AuthzPrimaryUpstreamProviderIgnored',
      status: 'True',
      reason: 'PrimaryUpstreamProviderIgnored',
      message: `spec.authzConfig.inline.primaryUpstreamProvider=${JSON.stringify(provider)} has no effect on MCPRemoteProxy: no embedded auth server runs here`,
    });
  }
  return out;
}

function sessionStorageWarning(
  replicas: number | undefined,
  provider: string | undefined,
  affinity: string,
): ConditionInput {
  const type = 'SessionStorageWarning';
  if (replicas === undefined || replicas <= 1) {
    return {
      type,
      status: 'False',
      reason: 'SessionStorageWarningNotApplicable',
      message: 'at most one replica',
    };
  }
  if (provider !== 'redis') {
    return {
      type,
      status: 'True',
      reason: 'SessionStorageMissingForReplicas',
      message: `replicas is ${replicas} but sessionStorage.provider is not redis: sessions are not shared across replicas`,
    };
  }
  if (affinity !== 'None') {
    return {
      type,
      status: 'True',
      reason: 'SessionAffinityNotNone',
      message: `replicas is ${replicas} with redis sessions but sessionAffinity is ${affinity}: set it to None so requests spread across replicas`,
    };
  }
  return {
    type,
    status: 'False',
    reason: 'SessionStorageConfigured',
    message: 'Redis session storage is shared by the replicas',
  };
}
