/**
 * The MCPRemoteProxy reconciler: read the proxy and everything it references from the cache, check
 * it, and either report the problem (phase Failed, the condition naming it, an Event, nothing
 * applied) or apply the desired ServiceAccount, ConfigMap, Deployment and Service by server-side
 * apply and report what the Deployment says. Level-based: every pass recomputes everything, so a
 * pass after a missed event, a restart or a hand edit ends in the same state.
 *
 * Deletion: a finalizer holds the proxy (phase Terminating) while its objects are deleted here. No
 * controller-manager runs the owner-reference garbage collector in every cluster this is tested
 * on, and waiting for it would leave the proxy's pods serving after the proxy is gone.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import {
  applyObject,
  applyStatus,
  addFinalizer,
  deleteUndesired,
  ownedBy,
  removeFinalizer,
} from '../controller/apply.js';
import type { KubeObject } from '../controller/resource.js';
import type { ReconcileContext, Reconciler } from '../controller/run.js';
import type { MCPRemoteProxy, MCPRemoteProxyStatus, ProxyPhase } from '../crd/index.js';
import { canonicalJson } from '../reconcile/hash.js';
import type { OperatorOptions } from '../reconcile/inputs.js';
import { proxyLabels, proxyServiceUrl } from '../reconcile/names.js';
import { desiredObjects } from '../reconcile/objects.js';
import { errorMessage } from '../../util/errors.js';
import { stampConditions, type ConditionInput } from './conditions.js';
import { CONFIG_MAPS, DEPLOYMENTS, REMOTE_PROXIES, SERVICE_ACCOUNTS, SERVICES } from './kinds.js';
import { gatherInputs, parseProxy } from './references.js';
import { checkProxy } from './remote-proxy-checks.js';

export const PROXY_FINALIZER = 'moat.dev/remote-proxy-cleanup';

/** The kinds a proxy owns, in the order they are cleaned up at deletion. */
export const PROXY_OWNED_TYPES = [DEPLOYMENTS, SERVICES, CONFIG_MAPS, SERVICE_ACCOUNTS];

export function remoteProxyReconciler(options: OperatorOptions): Reconciler {
  return async (key, ctx) => {
    const [namespace, name] = key.split('/') as [string, string];
    const stored = ctx.cache.get(REMOTE_PROXIES, name, namespace);
    if (!stored) return;
    if (stored.metadata?.deletionTimestamp) return finalize(stored, ctx);
    const proxy = await addFinalizer(ctx.client, REMOTE_PROXIES, stored, PROXY_FINALIZER);
    await reconcileLive(proxy, ctx, options);
  };
}

async function reconcileLive(
  stored: KubeObject,
  ctx: ReconcileContext,
  options: OperatorOptions,
): Promise<void> {
  const parsed = parseProxy(stored);
  if (!parsed.ok) {
    const condition: ConditionInput = {
      type: 'SpecValid',
      status: 'False',
      reason: 'InvalidSpec',
      message: parsed.message,
    };
    return fail(stored, ctx, [condition], condition, {});
  }
  const proxy = parsed.value;
  const gathered = gatherInputs(proxy, ctx.cache);
  const checks = checkProxy(gathered);
  const [problem] = checks.problems;
  if (problem) return fail(stored, ctx, checks.conditions, problem, checks.hashes);

  let deployment: V1Deployment;
  try {
    deployment = await applyAll(proxy, gathered.inputs, ctx, options);
  } catch (err) {
    const condition: ConditionInput = {
      type: 'ResourcesApplied',
      status: 'False',
      reason: 'ApplyFailed',
      message: errorMessage(err),
    };
    await fail(stored, ctx, [...checks.conditions, condition], condition, checks.hashes);
    throw err; // retried with backoff: an API error may pass
  }
  const available = deployment.status?.availableReplicas ?? 0;
  const ready: ConditionInput =
    available > 0
      ? {
          type: 'Ready',
          status: 'True',
          reason: 'DeploymentAvailable',
          message: `${available} replica(s) available`,
        }
      : {
          type: 'Ready',
          status: 'False',
          reason: 'DeploymentNotAvailable',
          message: 'waiting for the Deployment to report an available replica',
        };
  await writeStatus(stored, ctx, {
    phase: available > 0 ? 'Ready' : 'Pending',
    message: ready.message,
    conditions: [
      ready,
      ...checks.conditions,
      { type: 'ResourcesApplied', status: 'True', reason: 'Applied', message: '' },
    ],
    hashes: checks.hashes,
  });
}

/** Applies the desired objects; returns the Deployment as stored (its status tells readiness). */
async function applyAll(
  proxy: MCPRemoteProxy,
  inputs: Parameters<typeof desiredObjects>[0],
  ctx: ReconcileContext,
  options: OperatorOptions,
): Promise<V1Deployment> {
  const desired = desiredObjects(inputs, options);
  const namespace = proxy.metadata.namespace ?? '';
  const owner = proxy as unknown as KubeObject;
  const own = <T extends object>(obj: T) => ownedBy(obj as unknown as KubeObject, owner);
  if (desired.serviceAccount) {
    await applyObject(ctx.client, SERVICE_ACCOUNTS, own(desired.serviceAccount));
  } else {
    // spec.serviceAccount names the user's own: the one made earlier is no longer used.
    await deleteUndesired(ctx.client, SERVICE_ACCOUNTS, namespace, owner, selector(proxy), []);
  }
  await applyObject(ctx.client, CONFIG_MAPS, own(desired.configMap));
  const deployment = await applyObject(ctx.client, DEPLOYMENTS, own(desired.deployment));
  await applyObject(ctx.client, SERVICES, own(desired.service));
  if (desired.ignored.length > 0) {
    ctx.log.info({ ignored: desired.ignored }, 'override fields not applied');
  }
  return deployment as V1Deployment;
}

function selector(proxy: MCPRemoteProxy): string {
  return Object.entries(proxyLabels(proxy.metadata.name ?? ''))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

async function fail(
  stored: KubeObject,
  ctx: ReconcileContext,
  conditions: ConditionInput[],
  problem: ConditionInput,
  hashes: Record<string, string>,
): Promise<void> {
  const ready: ConditionInput = {
    type: 'Ready',
    status: 'False',
    reason: problem.reason,
    message: problem.message,
  };
  await writeStatus(stored, ctx, {
    phase: 'Failed',
    message: problem.message,
    conditions: [ready, ...conditions],
    hashes,
  });
}

interface Observation {
  phase: ProxyPhase;
  message: string;
  conditions: ConditionInput[];
  hashes: Record<string, string>;
}

/**
 * Writes the status when it differs from what is stored, and records an Event when the phase
 * changes. A write of the same observations is skipped, so a status write does not start a loop.
 */
async function writeStatus(stored: KubeObject, ctx: ReconcileContext, seen: Observation): Promise<void> {
  const previous = (stored.status ?? {}) as MCPRemoteProxyStatus;
  const spec = (stored.spec ?? {}) as Partial<MCPRemoteProxy['spec']>;
  const name = stored.metadata?.name ?? '';
  const namespace = stored.metadata?.namespace ?? '';
  const generation = stored.metadata?.generation;
  const status: MCPRemoteProxyStatus = {
    phase: seen.phase,
    message: seen.message,
    // Recomputed every pass, so a changed proxyPort is reflected (ToolHive set it once).
    url: proxyServiceUrl(name, namespace, spec.proxyPort ?? 8080),
    ...(spec.oidcConfigRef?.resourceUrl ? { externalUrl: spec.oidcConfigRef.resourceUrl } : {}),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    ...seen.hashes,
    conditions: stampConditions(previous.conditions, seen.conditions, generation),
  };
  if (canonicalJson(status) === canonicalJson(previous)) return;
  await applyStatus(ctx.client, REMOTE_PROXIES, stored, status as Record<string, unknown>);
  if (previous.phase !== seen.phase) {
    await ctx.events.record(
      stored,
      seen.phase === 'Failed' ? 'Warning' : 'Normal',
      seen.phase === 'Failed' ? (seen.conditions[0]?.reason ?? 'Failed') : `Proxy${seen.phase}`,
      seen.message || `phase ${seen.phase}`,
    );
  }
}

/** Deletion: phase Terminating, the owned objects deleted by this controller, then the finalizer removed. */
async function finalize(stored: KubeObject, ctx: ReconcileContext): Promise<void> {
  if (!stored.metadata?.finalizers?.includes(PROXY_FINALIZER)) return;
  const previous = (stored.status ?? {}) as MCPRemoteProxyStatus;
  if (previous.phase !== 'Terminating') {
    await applyStatus(ctx.client, REMOTE_PROXIES, stored, {
      ...previous,
      phase: 'Terminating',
      message: 'deleting the Deployment, Service, ConfigMap and ServiceAccount of this proxy',
    });
    await ctx.events.record(
      stored,
      'Normal',
      'ProxyTerminating',
      'deleting the objects of this proxy',
      'Delete',
    );
  }
  const proxy = stored as unknown as MCPRemoteProxy;
  for (const type of PROXY_OWNED_TYPES) {
    await deleteUndesired(ctx.client, type, stored.metadata.namespace ?? '', stored, selector(proxy), []);
  }
  await removeFinalizer(ctx.client, REMOTE_PROXIES, stored, PROXY_FINALIZER);
}
