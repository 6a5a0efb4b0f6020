/**
 * The small reconciler every referenced kind shares (MCPOIDCConfig, MCPAuthzConfig, …): check the
 * spec, write `Valid`, `configHash`, `observedGeneration` and the proxies that reference it, and
 * hold deletion with a finalizer while any proxy still does (condition `DeletionBlocked` names
 * them). ToolHive's equivalent considered only one workload kind; here the referrers are computed
 * from the proxies in the cache on every pass, so a proxy that drops the reference releases it.
 */
import { addFinalizer, applyStatus, removeFinalizer } from '../controller/apply.js';
import type { KubeObject, ResourceType } from '../controller/resource.js';
import type { ReconcileContext, Reconciler } from '../controller/run.js';
import type { CacheReader, KeyMapper } from '../controller/watch.js';
import type { ConfigStatus, MCPAuthzConfig } from '../crd/index.js';
import { cedarProblem } from '../reconcile/authz.js';
import { canonicalJson, configHash } from '../reconcile/index.js';
import { stampConditions, type ConditionInput } from './conditions.js';
import { AUTHZ_CONFIGS, REMOTE_PROXIES } from './kinds.js';
import { parseCustom, parseProxy, proxyNames } from './references.js';

export const IN_USE_FINALIZER = 'moat.dev/in-use';

/** Names of the proxies in the namespace that reference this object, sorted. */
export function referrers(type: ResourceType, obj: KubeObject, cache: CacheReader): string[] {
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  const out: string[] = [];
  for (const stored of cache.list(REMOTE_PROXIES, namespace)) {
    // A proxy being deleted still holds its references until its own finalizer is done.
    const proxy = parseProxy(stored);
    if (proxy.ok && proxyNames(proxy.value, type, cache).includes(name))
      out.push(stored.metadata?.name ?? '');
  }
  return out.sort();
}

/**
 * From a changed proxy to the objects of `type` to reconcile: those it references now, and those
 * whose status still lists it (it may have dropped or changed the reference).
 */
export function referencedBy(type: ResourceType): KeyMapper {
  return (obj, cache) => {
    const namespace = obj.metadata?.namespace ?? '';
    const proxyName = obj.metadata?.name ?? '';
    const proxy = parseProxy(obj);
    const now = proxy.ok ? proxyNames(proxy.value, type, cache) : [];
    const listed = cache
      .list(type, namespace)
      .filter((c) =>
        ((c.status as ConfigStatus | undefined)?.referencingWorkloads ?? []).some(
          (w) => w.name === proxyName,
        ),
      )
      .map((c) => c.metadata?.name ?? '');
    return [...new Set([...now, ...listed])].map((n) => `${namespace}/${n}`);
  };
}

export function configKindReconciler(type: ResourceType): Reconciler {
  return async (key, ctx) => {
    const [namespace, name] = key.split('/') as [string, string];
    const stored = ctx.cache.get(type, name, namespace);
    if (!stored) return;
    const users = referrers(type, stored, ctx.cache);
    if (stored.metadata?.deletionTimestamp) {
      if (users.length === 0) {
        await removeFinalizer(ctx.client, type, stored, IN_USE_FINALIZER);
        return;
      }
      const message = `deletion waits until no MCPRemoteProxy references this ${type.kind}; referenced by: ${users.join(', ')}`;
      await writeStatus(type, stored, ctx, users, validity(stored), {
        type: 'DeletionBlocked',
        status: 'True',
        reason: 'ReferencedByWorkloads',
        message,
      });
      await ctx.events.record(stored, 'Warning', 'DeletionBlocked', message, 'Delete');
      return;
    }
    const current = await addFinalizer(ctx.client, type, stored, IN_USE_FINALIZER);
    await writeStatus(type, current, ctx, users, validity(current));
  };
}

/** The `Valid` condition and the hash of the parsed spec. */
function validity(obj: KubeObject): { valid: ConditionInput; hash?: string } {
  const parsed = parseCustom<{ spec: unknown }>(obj);
  if (!parsed.ok) {
    return { valid: { type: 'Valid', status: 'False', reason: 'InvalidSpec', message: parsed.message } };
  }
  if (obj.kind === AUTHZ_CONFIGS.kind) {
    const { spec } = parsed.value as MCPAuthzConfig;
    const problem = cedarProblem(
      {
        version: '1.0',
        type: 'cedarv1',
        cedar: { policies: spec.policies, entities_json: spec.entitiesJson },
      },
      `MCPAuthzConfig ${obj.metadata?.name ?? ''}`,
    );
    if (problem)
      return { valid: { type: 'Valid', status: 'False', reason: 'InvalidPolicy', message: problem } };
  }
  return {
    valid: { type: 'Valid', status: 'True', reason: 'ValidationSucceeded', message: '' },
    hash: configHash(parsed.value.spec),
  };
}

async function writeStatus(
  type: ResourceType,
  stored: KubeObject,
  ctx: ReconcileContext,
  users: string[],
  { valid, hash }: { valid: ConditionInput; hash?: string },
  extra?: ConditionInput,
): Promise<void> {
  const previous = (stored.status ?? {}) as ConfigStatus;
  const generation = stored.metadata?.generation;
  const status: ConfigStatus = {
    conditions: stampConditions(previous.conditions, extra ? [valid, extra] : [valid], generation),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    ...(hash ? { configHash: hash } : {}),
    ...(users.length > 0
      ? { referencingWorkloads: users.map((name) => ({ kind: 'MCPRemoteProxy' as const, name })) }
      : {}),
  };
  if (canonicalJson(status) === canonicalJson(previous)) return;
  await applyStatus(ctx.client, type, stored, status as Record<string, unknown>);
  const before = previous.conditions?.find((c) => c.type === 'Valid')?.status;
  if (before !== valid.status && valid.status === 'False') {
    await ctx.events.record(stored, 'Warning', valid.reason, valid.message);
  }
}
