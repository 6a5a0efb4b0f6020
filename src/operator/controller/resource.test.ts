import { describe, expect, it } from 'vitest';
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  collectionPath,
  objectKey,
  objectPath,
  parseKey,
  type ResourceType,
} from './resource.js';

const NAMESPACES: ResourceType = {
  apiVersion: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
};

describe('resource paths and keys', () => {
  it.each([
    [CONFIG_MAPS, 'ns', '/api/v1/namespaces/ns/configmaps'],
    [CONFIG_MAPS, undefined, '/api/v1/configmaps'],
    [DEPLOYMENTS, 'ns', '/apis/apps/v1/namespaces/ns/deployments'],
    [NAMESPACES, 'ignored', '/api/v1/namespaces'],
  ])('collection of %o in %s is %s', (type, ns, path) => {
    expect(collectionPath(type, ns)).toBe(path);
  });

  it('object paths escape names and need a namespace for namespaced kinds', () => {
    expect(objectPath(DEPLOYMENTS, 'ns', 'a b')).toBe('/apis/apps/v1/namespaces/ns/deployments/a%20b');
    expect(objectPath(NAMESPACES, undefined, 'ns')).toBe('/api/v1/namespaces/ns');
    expect(() => objectPath(CONFIG_MAPS, undefined, 'x')).toThrow('a ConfigMap needs metadata.namespace');
  });

  it('keys round-trip for namespaced and cluster-scoped objects', () => {
    expect(objectKey({ metadata: { name: 'n', namespace: 'ns' } })).toBe('ns/n');
    expect(parseKey('ns/n')).toEqual({ namespace: 'ns', name: 'n' });
    expect(objectKey({ metadata: { name: 'cluster' } })).toBe('cluster');
    expect(parseKey('cluster')).toEqual({ name: 'cluster' });
    expect(() => objectKey({ metadata: {} })).toThrow('object has no metadata.name');
  });
});
