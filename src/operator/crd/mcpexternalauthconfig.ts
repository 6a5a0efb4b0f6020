/**
 * MCPExternalAuthConfig: how a proxy authenticates to the remote server (src/auth/outbound/). Only the types
 * Moat implements are offered; ToolHive's `headerInjection` was a silent no-op on remote proxies, here it works.
 */
import * as z from 'zod';
import { defineKind } from './kind.js';
import { configStatusSchema, headerName, httpUrl, secretKeyRefSchema, withRules } from './schema-parts.js';

export const EXTERNAL_AUTH_TYPES = [
  'tokenExchange',
  'bearerToken',
  'headerInjection',
  'unauthenticated',
] as const;
export type ExternalAuthType = (typeof EXTERNAL_AUTH_TYPES)[number];

export const tokenExchangeSchema = withRules(
  z.object({
    tokenUrl: httpUrl().describe('OAuth 2.0 token endpoint that performs the RFC 8693 exchange.'),
    clientId: z.string().min(1).max(512).optional(),
    clientSecretRef: secretKeyRefSchema.optional().describe('Secret key holding the client secret.'),
    audience: z.string().min(1).max(1024).optional().describe('Audience of the exchanged token.'),
    scopes: z
      .array(z.string().min(1).max(256))
      .max(64)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .optional(),
    subjectTokenType: z
      .enum(['access_token', 'id_token'])
      .default('access_token')
      .describe('Type of the incoming token sent as subject_token.'),
    externalTokenHeaderName: headerName()
      .optional()
      .describe('Header that carries the exchanged token; unset replaces Authorization.'),
  }),
  [
    {
      rule: '!has(self.clientSecretRef) || has(self.clientId)',
      message: 'clientSecretRef requires clientId',
      fieldPath: '.clientId',
      holds: (t) => t.clientSecretRef === undefined || t.clientId !== undefined,
    },
  ],
);

export const bearerTokenSchema = z.object({
  tokenSecretRef: secretKeyRefSchema.describe(
    'Secret key holding the token sent as `Authorization: Bearer`.',
  ),
});

export const headerInjectionSchema = z.object({
  headerName: headerName().describe('Header added to every request to the remote server.'),
  valueSecretRef: secretKeyRefSchema.describe('Secret key holding the header value.'),
});

const typedBlocks = {
  tokenExchange: 'tokenExchange',
  bearerToken: 'bearerToken',
  headerInjection: 'headerInjection',
} as const satisfies Partial<Record<ExternalAuthType, string>>;

export const mcpExternalAuthConfigSpecSchema = withRules(
  z.object({
    type: z.enum(EXTERNAL_AUTH_TYPES).describe('Outbound authentication mechanism.'),
    tokenExchange: tokenExchangeSchema.optional(),
    bearerToken: bearerTokenSchema.optional(),
    headerInjection: headerInjectionSchema.optional(),
  }),
  Object.values(typedBlocks).map((block) => ({
    rule: `self.type == '${block}' ? has(self.${block}) : !has(self.${block})`,
    message: `${block} must be set if and only if type is '${block}'`,
    fieldPath: `.${block}`,
    holds: (s: Partial<Record<string, unknown>> & { type: ExternalAuthType }) =>
      (s.type === block) === (s[block] !== undefined),
  })),
);
export const mcpExternalAuthConfigStatusSchema = configStatusSchema;

export type MCPExternalAuthConfigSpec = z.output<typeof mcpExternalAuthConfigSpecSchema>;
export type MCPExternalAuthConfigSpecInput = z.input<typeof mcpExternalAuthConfigSpecSchema>;
export type MCPExternalAuthConfigStatus = z.output<typeof mcpExternalAuthConfigStatusSchema>;

export const mcpExternalAuthConfigKind = defineKind({
  kind: 'MCPExternalAuthConfig',
  plural: 'mcpexternalauthconfigs',
  shortNames: ['extauth', 'mcpextauth'],
  columns: [{ name: 'Type', type: 'string', jsonPath: '.spec.type' }],
  specRequired: true,
  spec: mcpExternalAuthConfigSpecSchema,
  status: mcpExternalAuthConfigStatusSchema,
});
