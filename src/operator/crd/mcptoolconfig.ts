/** MCPToolConfig: which of the remote server's tools are exposed, and under what name and description. */
import * as z from 'zod';
import { defineKind } from './kind.js';
import { configStatusSchema, stringSet, withRules } from './schema-parts.js';

const toolName = () => z.string().min(1).max(128);

export const toolOverrideSchema = withRules(
  z.object({
    name: toolName().optional().describe('Name the client sees instead of the original.'),
    description: z
      .string()
      .max(4096)
      .optional()
      .describe('Description the client sees instead of the original.'),
  }),
  [
    {
      rule: 'has(self.name) || has(self.description)',
      message: 'a tool override must set name or description',
      holds: (o) => o.name !== undefined || o.description !== undefined,
    },
  ],
);

export const mcpToolConfigSpecSchema = z.object({
  toolsFilter: stringSet(toolName(), 1024)
    .optional()
    .describe('Tools exposed (by original name); empty or unset exposes every tool.'),
  toolsOverride: z
    .record(z.string(), toolOverrideSchema)
    .optional()
    .describe('Original tool name to its new name and/or description.'),
});
export const mcpToolConfigStatusSchema = configStatusSchema;

export type MCPToolConfigSpec = z.output<typeof mcpToolConfigSpecSchema>;
export type MCPToolConfigSpecInput = z.input<typeof mcpToolConfigSpecSchema>;
export type MCPToolConfigStatus = z.output<typeof mcpToolConfigStatusSchema>;

export const mcpToolConfigKind = defineKind({
  kind: 'MCPToolConfig',
  plural: 'mcptoolconfigs',
  shortNames: ['tc', 'toolconfig'],
  specRequired: false,
  spec: mcpToolConfigSpecSchema,
  status: mcpToolConfigStatusSchema,
});
