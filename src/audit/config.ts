/**
 * The audit config (--audit-config file, or RunConfig audit_config; --enable-audit gives `{}`),
 * with ToolHive's camelCase keys so files move between the tools.
 */
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import type { RunConfig } from '../config/runconfig.js';
import { describeIssues } from '../config/issues.js';
import { errorMessage, usageError } from '../util/errors.js';

export const EVENT_TYPES = [
  'mcp_initialize',
  'mcp_tool_call',
  'mcp_tools_list',
  'mcp_resource_read',
  'mcp_resources_list',
  'mcp_prompt_get',
  'mcp_prompts_list',
  'mcp_notification',
  'mcp_ping',
  'mcp_logging',
  'mcp_completion',
  'mcp_roots_list_changed',
  'mcp_request',
  'sse_connection',
  'http_request',
] as const;
export type AuditEventType = (typeof EVENT_TYPES)[number];

const eventType = z.string().refine((t) => (EVENT_TYPES as readonly string[]).includes(t), {
  error: (issue) => `unknown event type ${JSON.stringify(issue.input)} (known: ${EVENT_TYPES.join(', ')})`,
});

export const auditConfigSchema = z.strictObject({
  enabled: z.boolean().optional(),
  component: z.string().min(1).optional(),
  eventTypes: z.array(eventType).optional(),
  excludeEventTypes: z.array(eventType).optional(),
  includeRequestData: z.boolean().optional(),
  includeResponseData: z.boolean().optional(),
  detectApplicationErrors: z.boolean().optional(),
  maxDataSize: z
    .number()
    .int()
    .min(0)
    .max(10 * 1024 * 1024)
    .optional(),
  maxDelegationDepth: z.number().int().min(0).optional(),
  logFile: z.string().min(1).optional(),
});

export type AuditConfigFile = z.infer<typeof auditConfigSchema>;

export interface AuditSettings {
  component: string;
  /** Event types to record; undefined means all. */
  eventTypes?: ReadonlySet<string>;
  excludeEventTypes: ReadonlySet<string>;
  includeRequestData: boolean;
  includeResponseData: boolean;
  detectApplicationErrors: boolean;
  maxDataSize: number;
  /** Undefined means stdout. */
  logFile?: string;
}

/** Undefined when audit is off (no config, or `enabled: false`). */
export async function loadAuditSettings(
  config: Pick<RunConfig, 'audit_config' | 'audit_config_path' | 'name'>,
): Promise<AuditSettings | undefined> {
  let file: AuditConfigFile;
  if (config.audit_config_path !== undefined) {
    let text: string;
    try {
      text = await readFile(config.audit_config_path, 'utf8');
    } catch (err) {
      throw usageError(`--audit-config: cannot read ${config.audit_config_path}: ${errorMessage(err)}`);
    }
    file = parseAuditConfig(text, config.audit_config_path);
  } else if (config.audit_config !== undefined) {
    file = validateAuditConfig(config.audit_config, 'RunConfig audit_config');
  } else {
    return undefined;
  }
  if (file.enabled === false) return undefined;
  return {
    component: file.component ?? config.name,
    eventTypes: file.eventTypes ? new Set(file.eventTypes) : undefined,
    excludeEventTypes: new Set(file.excludeEventTypes ?? []),
    includeRequestData: file.includeRequestData ?? false,
    includeResponseData: file.includeResponseData ?? false,
    detectApplicationErrors: file.detectApplicationErrors ?? true,
    maxDataSize: file.maxDataSize ?? 1024,
    logFile: file.logFile,
  };
}

export function parseAuditConfig(text: string, source: string): AuditConfigFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(`audit config ${source}: not valid JSON: ${errorMessage(err)}`);
  }
  return validateAuditConfig(value, source);
}

export function validateAuditConfig(value: unknown, source: string): AuditConfigFile {
  const result = auditConfigSchema.safeParse(value);
  if (!result.success) throw usageError(`audit config ${source}: ${describeIssues(result.error)}`);
  return result.data;
}
