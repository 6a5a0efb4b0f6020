/**
 * What the reconciler reads, gathered by the controller from the proxy's namespace: the proxy, the
 * objects its `*Ref` fields name (absent when not found), and the Secrets and ConfigMaps its spec
 * and those objects name. Secrets are described by their keys only: no value ever enters here.
 */
import type {
  MCPAuthzConfig,
  MCPExternalAuthConfig,
  MCPGroup,
  MCPOIDCConfig,
  MCPRemoteProxy,
  MCPTelemetryConfig,
  MCPToolConfig,
} from '../crd/index.js';

export interface FoundSecret {
  /** Keys present in `data`/`stringData` (never the values). */
  keys: string[];
  /** Changes when the Secret's content changes: part of the pod checksum, so a rotation rolls the pods. */
  resourceVersion?: string;
}

export interface FoundConfigMap {
  data: Record<string, string>;
  resourceVersion?: string;
}

export interface ProxyInputs {
  proxy: MCPRemoteProxy;
  oidcConfig?: MCPOIDCConfig;
  authzConfig?: MCPAuthzConfig;
  externalAuthConfig?: MCPExternalAuthConfig;
  /** The object `spec.authServerRef` names (an MCPExternalAuthConfig). */
  authServerConfig?: MCPExternalAuthConfig;
  telemetryConfig?: MCPTelemetryConfig;
  toolConfig?: MCPToolConfig;
  group?: MCPGroup;
  /** Secrets found, by name, among those `referencedSecretNames` lists. */
  secrets: Record<string, FoundSecret>;
  /** ConfigMaps found, by name, among those `referencedConfigMapNames` lists. */
  configMaps: Record<string, FoundConfigMap>;
}

/** Operator-wide settings that shape every proxy. */
export interface OperatorOptions {
  /** Image of the `moat` container (default `mcp-moat:<package version>`, chosen by the controller). */
  proxyImage: string;
  /** Pull secrets added to every proxy after its own (`resourceOverrides.proxyDeployment.imagePullSecrets`). */
  defaultImagePullSecrets?: string[];
}
