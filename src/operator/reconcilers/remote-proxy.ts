/**
 * The MCPRemoteProxy reconciler: read the proxy and everything it references from the cache, plan
 * with the pure core (checks, then desired objects), apply the ServiceAccount, ConfigMap,
 * Deployment and Service by server-side apply with owner references, and write the status the core
 * computes from what was observed, with its Events. Level-based: every pass recomputes everything,
 * so a pass after a missed event, a restart or a hand edit ends in the same state. A failed check
 * applies nothing, so a running Deployment is left as it was.
 *
 * Deletion: a finalizer holds the proxy (phase Terminating) while this controller deletes its
 * objects itself. Owner references alone are not enough: the garbage collector runs in the
 * controller-manager, which not every API server has (the test server has none), and waiting for
 * it would leave the proxy's pods serving after the proxy is gone.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import {
  addFinalizer,
  applyObject,
  applyStatus,
  deleteUndesired,
  ownedBy,
  removeFinalizer,
} from '../controller/apply.js';
import type { KubeObject } from '../controller/resource.js';
import type { ReconcileContext, Reconciler } from '../controller/run.js';
import type { MCPRemoteProxy, MCPRemoteProxyStatus } from '../crd/index.js';
import {
  canonicalJson,
  computeStatus,
  planProxy,
  proxyLabels,
  type DesiredObjects,
  type OperatorOptions,
  type ProxyEvent,
  validateProxy,
} from '../reconcile/index.js';
import { errorMessage } from '../../util/errors.js';
import { CONFIG_MAPS, DEPLOYMENTS, REMOTE_PROXIES, SERVICE_ACCOUNTS, SERVICES } from './kinds.js';
import { gatherInputs, parseProxy } from './references.js';

export const PROXY_FINALIZER = 'moat.dev/remote-proxy-cleanup';

/** The kinds a proxy owns, in the order they are deleted at cleanup. */
export const PROXY_OWNED_TYPES = [DEPLOYMENTS, SERVICES, CONFIG_MAPS, SERVICE_ACCOUNTS];

export function remoteProxyReconciler(options: OperatorOptions): Reconciler {
  return async (key, ctx) => {
    const [namespace, name] = key.split('/') as [string, string];
    const stored = ctx.cache.get(REMOTE_PROXIES, name, namespace);
    if (!stored) return;
    const parsed = parseProxy(stored);
    if (!parsed.ok) {
      // The API server validates the spec, so this means the CRD and this operator disagree.
      ctx.log.error({ err: parsed.message }, 'MCPRemoteProxy spec does not parse');
      return;
    }
    if (stored.metadata?.deletionTimestamp) return finalize(parsed.value, ctx);
    const current = await addFinalizer(ctx.client, REMOTE_PROXIES, stored, PROXY_FINALIZER);
    const proxy: MCPRemoteProxy = {
      ...parsed.value,
      metadata: (current.metadata ?? parsed.value.metadata) as MCPRemoteProxy['metadata'],
    };
    await reconcileLive(proxy, ctx, options);
  };
}

async function reconcileLive(
  proxy: MCPRemoteProxy,
  ctx: ReconcileContext,
  options: OperatorOptions,
): Promise<void> {
  const inputs = gatherInputs(proxy, ctx.cache);
  const plan = planProxy(inputs, options);
  let deployment: V1Deployment | undefined;
  let applyError = plan.buildError;
  let failure: Error | undefined;
  if (plan.desired) {
    try {
      deployment = await applyAll(proxy, plan.desired, ctx);
    } catch (err) {
      applyError = errorMessage(err);
      failure = err instanceof Error ? err : new Error(String(err));
    }
  }
  const { status, events } = computeStatus({
    inputs,
    checks: plan.checks,
    applyError,
    deployment,
    ignored: plan.desired?.ignored,
    now: new Date(),
  });
  await writeStatus(proxy, status, events, ctx);
  if (failure) throw failure; // retried with backoff: an API error may pass
}

/** Applies the desired objects; returns the Deployment as stored (its status tells availability). */
async function applyAll(
  proxy: MCPRemoteProxy,
  desired: DesiredObjects,
  ctx: ReconcileContext,
): Promise<V1Deployment> {
  const owner = proxy as unknown as KubeObject;
  const own = (obj: object) => ownedBy(obj as KubeObject, owner);
  if (desired.serviceAccount) {
    await applyObject(ctx.client, SERVICE_ACCOUNTS, own(desired.serviceAccount));
  } else {
    // spec.serviceAccount names the user's own: one made earlier is no longer used.
    await deleteOwned(proxy, ctx, [SERVICE_ACCOUNTS]);
  }
  await applyObject(ctx.client, CONFIG_MAPS, own(desired.configMap));
  const deployment = await applyObject(ctx.client, DEPLOYMENTS, own(desired.deployment));
  await applyObject(ctx.client, SERVICES, own(desired.service));
  return deployment as V1Deployment;
}

function deleteOwned(proxy: MCPRemoteProxy, ctx: ReconcileContext, types: typeof PROXY_OWNED_TYPES) {
  const selector = Object.entries(proxyLabels(proxy.metadata.name ?? ''))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const owner = proxy as unknown as KubeObject;
  return Promise.all(
    types.map((type) =>
      deleteUndesired(ctx.client, type, proxy.metadata.namespace ?? '', owner, selector, []),
    ),
  );
}

/**
 * Writes the status when it differs from what is stored (so a status write does not start a
 * loop of no-op passes) and records the Events of the transition.
 */
async function writeStatus(
  proxy: MCPRemoteProxy,
  status: MCPRemoteProxyStatus,
  events: ProxyEvent[],
  ctx: ReconcileContext,
): Promise<void> {
  if (canonicalJson(status) === canonicalJson(proxy.status ?? {})) return;
  const owner = proxy as unknown as KubeObject;
  await applyStatus(ctx.client, REMOTE_PROXIES, owner, status as Record<string, unknown>);
  for (const event of events) await ctx.events.record(owner, event.type, event.reason, event.message);
}

/** Deletion: status Terminating, the owned objects deleted, then the finalizer removed. */
async function finalize(proxy: MCPRemoteProxy, ctx: ReconcileContext): Promise<void> {
  if (!proxy.metadata.finalizers?.includes(PROXY_FINALIZER)) return;
  const inputs = gatherInputs(proxy, ctx.cache);
  const { status, events } = computeStatus({ inputs, checks: validateProxy(inputs), now: new Date() });
  await writeStatus(proxy, status, events, ctx);
  await deleteOwned(proxy, ctx, PROXY_OWNED_TYPES);
  await removeFinalizer(ctx.client, REMOTE_PROXIES, proxy as unknown as KubeObject, PROXY_FINALIZER);
}
