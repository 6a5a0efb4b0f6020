/**
 * One audit event per MCP request: who (subject, never the token), what (MCP method and tool,
 * prompt or resource), how it ended (success, denied, failure, error, application_error), how
 * long it took, on which session and from which address. The shape follows ToolHive's audit
 * events so existing log pipelines keep working.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEventType } from './config.js';
import type { ExchangeRecord, ExchangeSummary } from '../mcp/exchange.js';

export type Outcome = 'success' | 'denied' | 'failure' | 'error' | 'application_error';

export interface AuditEvent {
  time: string;
  level: 'AUDIT';
  msg: 'audit_event';
  audit_id: string;
  type: AuditEventType;
  logged_at: string;
  outcome: Outcome;
  component: string;
  source: { type: 'network'; value: string; extra?: { user_agent?: string } };
  subjects: { user_id: string; user: string; email?: string; local?: true };
  target: {
    endpoint: string;
    method?: string;
    name?: string;
    type: 'tool' | 'prompt' | 'resource' | 'endpoint';
  };
  metadata: { extra: Record<string, unknown> };
  data?: { request?: unknown; response?: string };
}

const METHOD_TYPES: Record<string, AuditEventType> = {
  initialize: 'mcp_initialize',
  'tools/call': 'mcp_tool_call',
  'tools/list': 'mcp_tools_list',
  'resources/read': 'mcp_resource_read',
  'resources/list': 'mcp_resources_list',
  'prompts/get': 'mcp_prompt_get',
  'prompts/list': 'mcp_prompts_list',
  'notifications/message': 'mcp_notification',
  ping: 'mcp_ping',
  'logging/setLevel': 'mcp_logging',
  'completion/complete': 'mcp_completion',
  'notifications/roots/list_changed': 'mcp_roots_list_changed',
};

const TARGET_TYPES: Record<string, AuditEvent['target']['type']> = {
  'tools/call': 'tool',
  'prompts/get': 'prompt',
  'resources/read': 'resource',
  'resources/subscribe': 'resource',
  'resources/unsubscribe': 'resource',
};

export function eventType(httpMethod: string, annotations: ExchangeRecord): AuditEventType {
  if (annotations.method !== undefined) return METHOD_TYPES[annotations.method] ?? 'mcp_request';
  return httpMethod === 'GET' ? 'sse_connection' : 'http_request';
}

export function outcomeOf(
  status: number,
  annotations: ExchangeRecord,
  detectApplicationErrors: boolean,
): Outcome {
  if (annotations.deniedBy !== undefined || status === 401 || status === 403) return 'denied';
  if (status >= 500) return 'error';
  if (status >= 400) return 'failure';
  if (detectApplicationErrors && annotations.rpcErrorCode !== undefined) return 'application_error';
  return 'success';
}

/** What the auditor adds to an exchange's summary. */
export interface EventFacts {
  type: AuditEventType;
  component: string;
  detectApplicationErrors: boolean;
  requestData?: unknown;
  responseData?: string;
}

export function buildEvent(summary: ExchangeSummary, facts: EventFacts): AuditEvent {
  const { record: annotations, identity } = summary;
  const now = new Date(summary.ended).toISOString();
  const extra: Record<string, unknown> = {
    duration_ms: summary.ended - summary.started,
    transport: summary.transport === 'sse' ? 'sse' : 'http',
    http_status: summary.status,
    response_size_bytes: summary.responseBytes,
  };
  if (annotations.sessionId !== undefined) extra.session_id = annotations.sessionId;
  if (annotations.id !== undefined) extra.request_id = annotations.id;
  if (annotations.deniedBy !== undefined) extra.denied_by = annotations.deniedBy;
  if (annotations.rpcErrorCode !== undefined) extra.jsonrpc_error_code = annotations.rpcErrorCode;
  if (annotations.toolDefinitionsChanged) extra.tool_definitions_changed = annotations.toolDefinitionsChanged;
  const event: AuditEvent = {
    time: now,
    level: 'AUDIT',
    msg: 'audit_event',
    audit_id: randomUUID(),
    type: facts.type,
    logged_at: now,
    outcome: outcomeOf(summary.status, annotations, facts.detectApplicationErrors),
    component: facts.component,
    source: {
      type: 'network',
      value: summary.clientAddress,
      ...(summary.userAgent ? { extra: { user_agent: summary.userAgent } } : {}),
    },
    subjects: {
      user_id: identity.subject,
      user:
        identity.name ??
        stringClaim(identity.claims.preferred_username) ??
        identity.email ??
        identity.subject,
      ...(identity.email ? { email: identity.email } : {}),
      ...(identity.local ? { local: true as const } : {}),
    },
    target: {
      endpoint: summary.path,
      ...(annotations.method !== undefined ? { method: annotations.method } : {}),
      ...(annotations.target !== undefined ? { name: annotations.target } : {}),
      type: (annotations.method !== undefined && TARGET_TYPES[annotations.method]) || 'endpoint',
    },
    metadata: { extra },
  };
  if (facts.requestData !== undefined || facts.responseData !== undefined) {
    event.data = {
      ...(facts.requestData !== undefined ? { request: facts.requestData } : {}),
      ...(facts.responseData !== undefined ? { response: facts.responseData } : {}),
    };
  }
  return event;
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
