/** The operator's custom resource kinds: schemas, types and CRD identities (group moat.dev, version v1beta1). */
import type { CustomResource } from './kind.js';
import { mcpAuthzConfigKind, type MCPAuthzConfigSpec, type MCPAuthzConfigStatus } from './mcpauthzconfig.js';
import {
  mcpExternalAuthConfigKind,
  type MCPExternalAuthConfigSpec,
  type MCPExternalAuthConfigStatus,
} from './mcpexternalauthconfig.js';
import { mcpGroupKind, type MCPGroupSpec, type MCPGroupStatus } from './mcpgroup.js';
import { mcpOidcConfigKind, type MCPOIDCConfigSpec, type MCPOIDCConfigStatus } from './mcpoidcconfig.js';
import { mcpRemoteProxyKind, type MCPRemoteProxySpec, type MCPRemoteProxyStatus } from './mcpremoteproxy.js';
import {
  mcpTelemetryConfigKind,
  type MCPTelemetryConfigSpec,
  type MCPTelemetryConfigStatus,
} from './mcptelemetryconfig.js';
import { mcpToolConfigKind, type MCPToolConfigSpec, type MCPToolConfigStatus } from './mcptoolconfig.js';

export * from './kind.js';
export * from './schema-parts.js';
export * from './scheduling.js';
export * from './mcpremoteproxy.js';
export * from './mcpoidcconfig.js';
export * from './mcpauthzconfig.js';
export * from './mcpexternalauthconfig.js';
export * from './mcptelemetryconfig.js';
export * from './mcptoolconfig.js';
export * from './mcpgroup.js';

export type MCPRemoteProxy = CustomResource<MCPRemoteProxySpec, MCPRemoteProxyStatus>;
export type MCPOIDCConfig = CustomResource<MCPOIDCConfigSpec, MCPOIDCConfigStatus>;
export type MCPAuthzConfig = CustomResource<MCPAuthzConfigSpec, MCPAuthzConfigStatus>;
export type MCPExternalAuthConfig = CustomResource<MCPExternalAuthConfigSpec, MCPExternalAuthConfigStatus>;
export type MCPTelemetryConfig = CustomResource<MCPTelemetryConfigSpec, MCPTelemetryConfigStatus>;
export type MCPToolConfig = CustomResource<MCPToolConfigSpec, MCPToolConfigStatus>;
export type MCPGroup = CustomResource<MCPGroupSpec, MCPGroupStatus>;

/** Every kind, in the order their CRDs are installed. */
export const ALL_KINDS = [
  mcpRemoteProxyKind,
  mcpOidcConfigKind,
  mcpAuthzConfigKind,
  mcpExternalAuthConfigKind,
  mcpTelemetryConfigKind,
  mcpToolConfigKind,
  mcpGroupKind,
] as const;
