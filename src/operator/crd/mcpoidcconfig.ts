/**
 * MCPOIDCConfig: how a proxy validates incoming tokens (src/auth/inbound/settings.ts). Audience and scopes are
 * per proxy (its oidcConfigRef), so one config serves many proxies without token replay between them.
 */
import * as z from 'zod';
import { defineKind } from './kind.js';
import {
  caBundleRefSchema,
  configStatusSchema,
  httpUrl,
  secretKeyRefSchema,
  withRules,
} from './schema-parts.js';

const httpsUnlessAllowed = (field: 'issuer' | 'jwksUrl' | 'introspectionUrl') => ({
  rule: `self.insecureAllowHTTP || !has(self.${field}) || self.${field}.startsWith('https://')`,
  message: `${field} must be an https:// URL unless insecureAllowHTTP is true`,
  fieldPath: `.${field}`,
  holds: (c: { insecureAllowHTTP: boolean } & Partial<Record<typeof field, string>>) =>
    c.insecureAllowHTTP || c[field] === undefined || c[field].startsWith('https://'),
});

export const inlineOidcSchema = withRules(
  z.object({
    issuer: httpUrl().describe(
      'Token issuer URL; discovery starts at <issuer>/.well-known/openid-configuration.',
    ),
    jwksUrl: httpUrl().optional().describe('JWKS URL; default from discovery.'),
    introspectionUrl: httpUrl().optional().describe('RFC 7662 introspection URL for opaque tokens.'),
    clientId: z.string().min(1).max(512).optional().describe('Client ID for introspection.'),
    clientSecretRef: secretKeyRefSchema
      .optional()
      .describe('Secret key holding the client secret for introspection.'),
    caBundleRef: caBundleRefSchema
      .optional()
      .describe('ConfigMap key with the PEM CA bundle of the identity provider.'),
    jwksAllowPrivateIP: z
      .boolean()
      .default(false)
      .describe('Allow issuer/JWKS/introspection endpoints on private IP addresses.'),
    insecureAllowHTTP: z.boolean().default(false).describe('Allow http:// endpoints (testing only).'),
  }),
  [
    httpsUnlessAllowed('issuer'),
    httpsUnlessAllowed('jwksUrl'),
    httpsUnlessAllowed('introspectionUrl'),
    {
      rule: '!has(self.clientSecretRef) || has(self.clientId)',
      message: 'clientSecretRef requires clientId',
      fieldPath: '.clientId',
      holds: (c) => c.clientSecretRef === undefined || c.clientId !== undefined,
    },
  ],
);

export const kubernetesServiceAccountOidcSchema = z.object({
  issuer: httpUrl()
    .default('https://kubernetes.default.svc')
    .describe("The cluster's service-account token issuer."),
  jwksUrl: httpUrl().optional().describe('JWKS URL; default from discovery.'),
  useClusterAuth: z
    .boolean()
    .default(true)
    .describe(
      "Reach the issuer with the pod's service-account token and the cluster CA (private IPs allowed).",
    ),
});

export const mcpOidcConfigSpecSchema = withRules(
  z.object({
    type: z.enum(['kubernetesServiceAccount', 'inline']).describe('Where tokens come from.'),
    kubernetesServiceAccount: kubernetesServiceAccountOidcSchema.optional(),
    inline: inlineOidcSchema.optional(),
  }),
  [
    {
      rule: "self.type == 'inline' ? has(self.inline) : !has(self.inline)",
      message: "inline must be set when type is 'inline', and must not be set otherwise",
      holds: (s) => (s.type === 'inline') === (s.inline !== undefined),
    },
    {
      rule: "self.type == 'kubernetesServiceAccount' || !has(self.kubernetesServiceAccount)",
      message: "kubernetesServiceAccount must not be set unless type is 'kubernetesServiceAccount'",
      holds: (s) => s.type === 'kubernetesServiceAccount' || s.kubernetesServiceAccount === undefined,
    },
  ],
);
export const mcpOidcConfigStatusSchema = configStatusSchema;

export type MCPOIDCConfigSpec = z.output<typeof mcpOidcConfigSpecSchema>;
export type MCPOIDCConfigSpecInput = z.input<typeof mcpOidcConfigSpecSchema>;
export type MCPOIDCConfigStatus = z.output<typeof mcpOidcConfigStatusSchema>;

export const mcpOidcConfigKind = defineKind({
  kind: 'MCPOIDCConfig',
  plural: 'mcpoidcconfigs',
  shortNames: ['mcpoidc'],
  columns: [{ name: 'Source', type: 'string', jsonPath: '.spec.type' }],
  specRequired: true,
  spec: mcpOidcConfigSpecSchema,
  status: mcpOidcConfigStatusSchema,
});
