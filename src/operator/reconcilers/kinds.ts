/**
 * Where each kind the operator reads or writes lives on the API server: our custom kinds (from the
 * CRD definitions, so a rename there cannot leave a stale path here) and the built-in kinds a proxy
 * owns.
 */
import { ALL_KINDS, API_GROUP_VERSION, type KindDefinition } from '../crd/index.js';
import type { ResourceType } from '../controller/resource.js';

export { CONFIG_MAPS, DEPLOYMENTS, SECRETS } from '../controller/resource.js';

function customType(kind: KindDefinition): ResourceType {
  return { apiVersion: API_GROUP_VERSION, kind: kind.kind, plural: kind.plural, namespaced: true };
}

const byKind = new Map(ALL_KINDS.map((k) => [k.kind, customType(k)]));

function custom(kind: string): ResourceType {
  const type = byKind.get(kind);
  if (!type) throw new Error(`no CRD defines kind ${kind}`);
  return type;
}

export const REMOTE_PROXIES = custom('MCPRemoteProxy');
export const OIDC_CONFIGS = custom('MCPOIDCConfig');
export const AUTHZ_CONFIGS = custom('MCPAuthzConfig');
export const EXTERNAL_AUTH_CONFIGS = custom('MCPExternalAuthConfig');
export const TELEMETRY_CONFIGS = custom('MCPTelemetryConfig');
export const TOOL_CONFIGS = custom('MCPToolConfig');
export const GROUPS = custom('MCPGroup');

export const SERVICES: ResourceType = {
  apiVersion: 'v1',
  kind: 'Service',
  plural: 'services',
  namespaced: true,
};
export const SERVICE_ACCOUNTS: ResourceType = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
};
