import { describe, expect, it } from 'vitest';
import { CONFIG_MAPS, DEPLOYMENTS, type KubeObject } from './resource.js';
import { controllerOwnerKey, selfKey, type CacheReader } from './watch.js';

const noCache: CacheReader = { list: () => [], get: () => undefined };

function owned(refs: { apiVersion: string; kind: string; name: string; controller?: boolean }[]): KubeObject {
  return {
    metadata: { name: 'child', namespace: 'ns', ownerReferences: refs.map((r) => ({ uid: 'u', ...r })) },
  };
}

describe('key mappings', () => {
  it('selfKey maps an object to its own key', () => {
    expect(selfKey({ metadata: { name: 'a', namespace: 'ns' } }, noCache)).toEqual(['ns/a']);
  });

  it('controllerOwnerKey maps to the controlling owner of the right kind and group only', () => {
    const toOwner = controllerOwnerKey(CONFIG_MAPS);
    expect(
      toOwner(owned([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', controller: true }]), noCache),
    ).toEqual(['ns/owner']);
    // Not the controller, another kind, another group of the same kind name: no key.
    expect(toOwner(owned([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }]), noCache)).toEqual([]);
    expect(
      toOwner(owned([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x', controller: true }]), noCache),
    ).toEqual([]);
    expect(
      toOwner(
        owned([{ apiVersion: 'example.test/v1', kind: 'ConfigMap', name: 'x', controller: true }]),
        noCache,
      ),
    ).toEqual([]);
    // Another version of the owner's group still maps.
    expect(
      controllerOwnerKey(DEPLOYMENTS)(
        owned([{ apiVersion: 'apps/v1beta2', kind: 'Deployment', name: 'd', controller: true }]),
        noCache,
      ),
    ).toEqual(['ns/d']);
  });
});
