/**
 * Writing desired state: server-side apply under one field manager (so applying the same object
 * twice changes nothing, and a hand edit of a field we own is put back), owner references, deletion
 * of owned objects that are no longer desired, status through the `/status` subresource, and
 * finalizers with optimistic-concurrency retries.
 */
import { HttpMethod, PatchStrategy } from '@kubernetes/client-node';
import { FIELD_MANAGER, isStatus, type KubeClient } from './client.js';
import {
  collectionPath,
  objectPath,
  type KubeObject,
  type OwnerReference,
  type ResourceType,
} from './resource.js';

function nameOf(obj: KubeObject): { name: string; namespace: string | undefined } {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`${obj.kind ?? 'object'} has no metadata.name`);
  return { name, namespace: obj.metadata?.namespace };
}

function ssa<T extends KubeObject>(client: KubeClient, path: string, body: KubeObject): Promise<T> {
  return client.request<T>(HttpMethod.PATCH, path, {
    body,
    contentType: PatchStrategy.ServerSideApply,
    // force: this controller is the one owner of what it applies; a hand edit is taken back.
    query: { fieldManager: FIELD_MANAGER, force: true },
  });
}

/** Server-side apply of the whole desired object; returns the object as stored. */
export function applyObject<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  desired: T,
): Promise<T> {
  const { name, namespace } = nameOf(desired);
  return ssa<T>(client, objectPath(type, namespace, name), {
    ...desired,
    apiVersion: type.apiVersion,
    kind: type.kind,
  });
}

/** The owner reference that makes `owner` the controller of an object (garbage collection, owner mapping). */
export function controllerReference(owner: KubeObject): OwnerReference {
  const { apiVersion, kind, metadata } = owner;
  if (!apiVersion || !kind || !metadata?.name || !metadata.uid) {
    throw new Error(
      'an owner needs apiVersion, kind, metadata.name and metadata.uid (read it from the API server)',
    );
  }
  return {
    apiVersion,
    kind,
    name: metadata.name,
    uid: metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** `desired` with `owner` as its controller. */
export function ownedBy<T extends KubeObject>(desired: T, owner: KubeObject): T {
  return { ...desired, metadata: { ...desired.metadata, ownerReferences: [controllerReference(owner)] } };
}

/**
 * Deletes the objects of `type` in `namespace` that carry `labelSelector`, are controlled by
 * `owner`, and are not named in `keep`. Returns the names deleted. The label narrows the list;
 * the owner check keeps an object someone else labelled alike safe.
 */
export async function deleteUndesired(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  owner: KubeObject,
  labelSelector: string,
  keep: readonly string[],
): Promise<string[]> {
  const uid = owner.metadata?.uid;
  if (!uid) throw new Error('the owner has no metadata.uid');
  const list = await client.list(collectionPath(type, namespace), labelSelector);
  const doomed = list.items.filter(
    (item) =>
      !keep.includes(item.metadata?.name ?? '') &&
      (item.metadata?.ownerReferences ?? []).some((ref) => ref.uid === uid && ref.controller === true),
  );
  const deleted: string[] = [];
  for (const item of doomed) {
    const name = item.metadata!.name!;
    try {
      await client.delete(objectPath(type, namespace, name), { propagationPolicy: 'Background' });
      deleted.push(name);
    } catch (err) {
      if (!isStatus(err, 404)) throw err; // gone already: the goal is met
    }
  }
  return deleted;
}

/**
 * Writes `status` through the `/status` subresource by server-side apply: fields we wrote before
 * and no longer send are removed, fields other writers own stay.
 */
export function applyStatus<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject,
  status: Record<string, unknown>,
): Promise<T> {
  const { name, namespace } = nameOf(obj);
  return ssa<T>(client, `${objectPath(type, namespace, name)}/status`, {
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: { name, namespace },
    status,
  });
}

const CONFLICT_RETRIES = 5;

/** Read-modify-write of `metadata.finalizers`, retried when someone else changed the object meanwhile. */
async function updateFinalizers(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject,
  change: (finalizers: string[]) => string[] | undefined,
): Promise<KubeObject> {
  const { name, namespace } = nameOf(obj);
  const path = objectPath(type, namespace, name);
  let current = obj;
  let fresh = false;
  for (let attempt = 0; ; attempt++) {
    const next = change(current.metadata?.finalizers ?? []);
    if (!next) {
      // The caller's copy (often from a cache) may be stale: confirm "nothing to do" on a fresh read.
      if (fresh) return current;
      current = await client.get(path);
      fresh = true;
      continue;
    }
    try {
      // resourceVersion in a merge patch makes it conditional: 409 when the object moved on.
      return await client.mergePatch(path, {
        metadata: { finalizers: next, resourceVersion: current.metadata?.resourceVersion },
      });
    } catch (err) {
      if (!isStatus(err, 409) || attempt >= CONFLICT_RETRIES) throw err;
      current = await client.get(path);
      fresh = true;
    }
  }
}

/** Adds `finalizer` unless present; returns the object as stored. */
export function addFinalizer(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject,
  finalizer: string,
): Promise<KubeObject> {
  return updateFinalizers(client, type, obj, (list) =>
    list.includes(finalizer) ? undefined : [...list, finalizer],
  );
}

/** Removes `finalizer` if present; a missing object counts as done. */
export async function removeFinalizer(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject,
  finalizer: string,
): Promise<KubeObject | undefined> {
  try {
    return await updateFinalizers(client, type, obj, (list) =>
      list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined,
    );
  } catch (err) {
    if (isStatus(err, 404)) return undefined;
    throw err;
  }
}
