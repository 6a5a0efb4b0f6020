/** MCPGroup: a named set of proxies in one namespace (RunConfig `group`); members are listed in the status. */
import * as z from 'zod';
import { defineKind } from './kind.js';
import { configStatusSchema } from './schema-parts.js';

export const mcpGroupSpecSchema = z.object({
  description: z.string().max(1024).optional().describe('What the servers of this group are for.'),
});
export const mcpGroupStatusSchema = configStatusSchema;

export type MCPGroupSpec = z.output<typeof mcpGroupSpecSchema>;
export type MCPGroupSpecInput = z.input<typeof mcpGroupSpecSchema>;
export type MCPGroupStatus = z.output<typeof mcpGroupStatusSchema>;

export const mcpGroupKind = defineKind({
  kind: 'MCPGroup',
  plural: 'mcpgroups',
  shortNames: ['mcpg', 'mcpgroup'],
  columns: [{ name: 'Description', type: 'string', jsonPath: '.spec.description', priority: 1 }],
  specRequired: false,
  spec: mcpGroupSpecSchema,
  status: mcpGroupStatusSchema,
});
