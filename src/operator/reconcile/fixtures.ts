/**
 * Test fixtures: objects as the API server stores them (specs parsed by the CRD schemas, so
 * defaults are applied). Only the reconcile tests import this file.
 */
import type * as z from 'zod';
import {
  API_GROUP_VERSION,
  mcpRemoteProxySpecSchema,
  type ConfigStatus,
  type CustomResource,
  type MCPRemoteProxy,
  type MCPRemoteProxySpecInput,
} from '../crd/index.js';
import { PROXY_UID } from './deployment.js';
import { configHash } from './hash.js';
import type { ProxyInputs } from './inputs.js';

export const NAMESPACE = 'team-a';

/**
 * The security context the proxy container must always get, whatever the user's overrides say:
 * written out here rather than taken from deployment.ts, so the tests check the code against it.
 */
export const RESTRICTED_PROXY_CONTAINER = {
  runAsNonRoot: true,
  runAsUser: PROXY_UID,
  runAsGroup: PROXY_UID,
  privileged: false,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

export function makeProxy(spec: MCPRemoteProxySpecInput, name = 'github', generation = 1): MCPRemoteProxy {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: 'MCPRemoteProxy',
    metadata: { name, namespace: NAMESPACE, generation, uid: `uid-${name}` },
    spec: mcpRemoteProxySpecSchema.parse(spec),
  };
}

export function makeInputs(spec: MCPRemoteProxySpecInput, extra: Partial<ProxyInputs> = {}): ProxyInputs {
  return { proxy: makeProxy(spec), secrets: {}, configMaps: {}, ...extra };
}

/** A referenced config object, Valid=True with its configHash unless `valid: false`. */
export function makeConfig<S extends z.ZodType>(
  kind: string,
  schema: S,
  name: string,
  spec: z.input<S>,
  valid: boolean | { message: string } = true,
): CustomResource<z.output<S>, ConfigStatus> {
  const parsed = schema.parse(spec);
  const ok = valid === true;
  return {
    apiVersion: API_GROUP_VERSION,
    kind,
    metadata: { name, namespace: NAMESPACE, generation: 1 },
    spec: parsed,
    status: {
      observedGeneration: 1,
      configHash: configHash(parsed),
      conditions: [
        {
          type: 'Valid',
          status: ok ? 'True' : 'False',
          reason: ok ? 'ConfigValid' : 'ConfigInvalid',
          message: typeof valid === 'object' ? valid.message : '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          observedGeneration: 1,
        },
      ],
    },
  };
}

export function secret(...keys: string[]): { keys: string[]; resourceVersion: string } {
  return { keys, resourceVersion: '1' };
}
