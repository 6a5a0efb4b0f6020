/**
 * What the controller must read before reconciling a proxy, in two steps: the objects its `*Ref`
 * fields name, then the Secrets and ConfigMaps named by the spec and by those objects. The same
 * names drive the watches: a change to any of them re-reconciles the proxy.
 */
import type { MCPRemoteProxySpec } from '../crd/index.js';
import type { ProxyInputs } from './inputs.js';
import { proxySecrets } from './secrets.js';

export interface ReferencedNames {
  oidcConfig?: string;
  authzConfig?: string;
  externalAuthConfig?: string;
  /** Also an MCPExternalAuthConfig. */
  authServerConfig?: string;
  telemetryConfig?: string;
  toolConfig?: string;
  group?: string;
}

/** Names of the referenced custom objects, by the ProxyInputs field they fill. */
export function referencedObjects(spec: MCPRemoteProxySpec): ReferencedNames {
  const names: ReferencedNames = {
    oidcConfig: spec.oidcConfigRef?.name,
    authzConfig: spec.authzConfigRef?.name,
    externalAuthConfig: spec.externalAuthConfigRef?.name,
    authServerConfig: spec.authServerRef?.name,
    telemetryConfig: spec.telemetryConfigRef?.name,
    toolConfig: spec.toolConfigRef?.name,
    group: spec.groupRef?.name,
  };
  return Object.fromEntries(Object.entries(names).filter(([, name]) => name !== undefined));
}

type WithReferences = Omit<ProxyInputs, 'secrets' | 'configMaps'>;

/** Secrets the pod reads, given the referenced objects already found. */
export function referencedSecretNames(inputs: WithReferences): string[] {
  const names = proxySecrets({ ...inputs, secrets: {}, configMaps: {} }).map((s) => s.ref.name);
  return [...new Set(names)].sort();
}

/** ConfigMaps read for the authz config and mounted as CA bundles, given the referenced objects. */
export function referencedConfigMapNames(inputs: WithReferences): string[] {
  const { spec } = inputs.proxy;
  const names = [
    spec.authzConfig?.type === 'configMap' ? spec.authzConfig.configMap?.name : undefined,
    spec.oidcConfigRef ? inputs.oidcConfig?.spec.inline?.caBundleRef?.name : undefined,
    spec.telemetryConfigRef ? inputs.telemetryConfig?.spec.openTelemetry?.caBundleRef?.name : undefined,
  ].filter((n) => n !== undefined);
  return [...new Set(names)].sort();
}
