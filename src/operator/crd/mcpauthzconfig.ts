/**
 * MCPAuthzConfig: a shared Cedar authorization config (Moat's only authorizer, src/authz/config.ts).
 * ToolHive takes a free-form `config` object the schema cannot check; here every field is typed.
 */
import * as z from 'zod';
import { defineKind } from './kind.js';
import { configStatusSchema } from './schema-parts.js';

/** Cedar policies and static entities: the `inline` part of a proxy's authzConfig and of this kind. */
export const cedarPoliciesFields = {
  policies: z
    .array(z.string().min(1).max(65536))
    .min(1)
    .max(256)
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .describe('Cedar policies, one policy set per item.'),
  entitiesJson: z
    .string()
    .max(1048576)
    .default('[]')
    .describe('JSON array of static Cedar entities, for transitive `in` checks.'),
};

/** How JWT claims become Cedar principal parents. */
export const cedarClaimFields = {
  groupClaimName: z
    .string()
    .max(253)
    .optional()
    .describe('JWT claim holding group membership; default: groups, roles, cognito:groups.'),
  roleClaimName: z.string().max(253).optional().describe('JWT claim holding role membership.'),
  groupEntityType: z
    .string()
    .max(63)
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional()
    .describe(
      'Cedar entity type of groups and roles from the claims; default MoatGroup. No namespaces (Foo::Bar).',
    ),
};

/** How call arguments reach Cedar: RunConfig `authz_argument_mapping` (`moat run --authz-argument-mapping`). */
export const cedarArgumentFields = {
  argumentMapping: z
    .enum(['strict', 'lossy'])
    .optional()
    .describe(
      'A call argument Cedar cannot hold as it is (null, 1e21, a reserved key): strict (default) refuses the call, lossy leaves it out.',
    ),
};

export const mcpAuthzConfigSpecSchema = z.object({
  ...cedarPoliciesFields,
  ...cedarClaimFields,
  ...cedarArgumentFields,
});
export const mcpAuthzConfigStatusSchema = configStatusSchema;

export type MCPAuthzConfigSpec = z.output<typeof mcpAuthzConfigSpecSchema>;
export type MCPAuthzConfigSpecInput = z.input<typeof mcpAuthzConfigSpecSchema>;
export type MCPAuthzConfigStatus = z.output<typeof mcpAuthzConfigStatusSchema>;

export const mcpAuthzConfigKind = defineKind({
  kind: 'MCPAuthzConfig',
  plural: 'mcpauthzconfigs',
  shortNames: ['authzcfg', 'mcpauthz'],
  specRequired: true,
  spec: mcpAuthzConfigSpecSchema,
  status: mcpAuthzConfigStatusSchema,
});
