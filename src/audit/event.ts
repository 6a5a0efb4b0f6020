/**
 * One audit event per MCP request: who (subject, never the token), what (MCP method and tool,
 * prompt or resource), how it ended (success, denied, failure, error, application_error), how
 * long it took, on which session and from which address. The shape follows ToolHive's audit
 * events so existing log pipelines keep working.
 */
import { auditId } from './audit-id.js';
import type { AuditEventType } from './config.js';
import type { ExchangeRecord, ExchangeSummary } from '../mcp/exchange.js';
import type { Identity } from '../mcp/identity.js';

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
  /** Who was proven; a refused caller is `anonymous` with what it presented (never a principal). */
  subjects:
    | { user_id: string; user: string; email?: string; local?: true }
    | { user_id: 'anonymous'; user: 'anonymous'; anonymous: true; presented: string };
  target: {
    endpoint: string;
    method?: string;
    name?: string;
    /** The member workload behind an aggregate endpoint (`moat group serve`), when known. */
    backend?: string;
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
  requestData?: string;
  responseData?: string;
}

/**
 * The event as one JSON line (with its newline), written field by field: no event object is
 * built, and each string goes through JSON.stringify, so escaping is JSON's own. The fields and
 * their order are AuditEvent's. Per request under load this cost about half of building the
 * object and stringifying it.
 */
export function eventLine(summary: ExchangeSummary, facts: EventFacts): string {
  const { record: annotations, identity } = summary;
  const now = isoTime(summary.ended);
  const { method, target } = annotations;
  let line = `{"time":${now},"level":"AUDIT","msg":"audit_event","audit_id":"${auditId()}","type":"${facts.type}","logged_at":${now},"outcome":"${outcomeOf(summary.status, annotations, facts.detectApplicationErrors)}","component":${JSON.stringify(facts.component)},"source":${sourceJson(summary.clientAddress, summary.userAgent)},"subjects":${subjectsJson(identity)},"target":{"endpoint":${JSON.stringify(summary.path)}`;
  if (method !== undefined) line += `,"method":${JSON.stringify(method)}`;
  if (target !== undefined) line += `,"name":${JSON.stringify(target)}`;
  if (annotations.backend !== undefined) line += `,"backend":${JSON.stringify(annotations.backend)}`;
  line += `,"type":"${(method !== undefined && TARGET_TYPES[method]) || 'endpoint'}"},"metadata":{"extra":{"duration_ms":${summary.ended - summary.started},"transport":"${summary.transport === 'sse' ? 'sse' : 'http'}","http_status":${summary.status},"response_size_bytes":${summary.responseBytes}`;
  if (annotations.sessionId !== undefined) line += `,"session_id":${JSON.stringify(annotations.sessionId)}`;
  if (annotations.id !== undefined) line += `,"request_id":${JSON.stringify(annotations.id)}`;
  if (annotations.deniedBy !== undefined) line += `,"denied_by":${JSON.stringify(annotations.deniedBy)}`;
  if (annotations.rpcErrorCode !== undefined)
    line += `,"jsonrpc_error_code":${JSON.stringify(annotations.rpcErrorCode)}`;
  if (annotations.toolDefinitionsChanged)
    line += `,"tool_definitions_changed":${JSON.stringify(annotations.toolDefinitionsChanged)}`;
  if (annotations.guardrailFindings)
    line += `,"guardrail_findings":${JSON.stringify(annotations.guardrailFindings)}`;
  line += '}}';
  const { requestData, responseData } = facts;
  if (requestData !== undefined || responseData !== undefined) {
    line += ',"data":{';
    if (requestData !== undefined) line += `"request":${JSON.stringify(requestData)}`;
    if (responseData !== undefined)
      line += `${requestData !== undefined ? ',' : ''}"response":${JSON.stringify(responseData)}`;
    line += '}';
  }
  return `${line}}\n`;
}

/**
 * The JSON string of a time: toISOString once per second, then the milliseconds appended (an SDK
 * call rarely shares its millisecond with the previous event, but nearly always its second).
 */
let lastSecond = { second: Number.NaN, prefix: '' };
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond.second) {
    const iso = new Date(second * 1000).toISOString();
    // Everything up to the milliseconds: `"2026-11-25T15:34:02.` (also for years past 9999).
    lastSecond = { second, prefix: `"${iso.slice(0, -4)}` };
  }
  const millis = ms - second * 1000;
  return `${lastSecond.prefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z"`;
}

/** The `source` object, reused while the caller's address and user agent repeat (they mostly do). */
let lastSource = { address: '', userAgent: undefined as string | undefined, json: '' };
function sourceJson(address: string, userAgent: string | undefined): string {
  if (address === lastSource.address && userAgent === lastSource.userAgent && lastSource.json !== '')
    return lastSource.json;
  let json = `{"type":"network","value":${JSON.stringify(address)}`;
  if (userAgent) json += `,"extra":{"user_agent":${JSON.stringify(userAgent)}}`;
  json += '}';
  lastSource = { address, userAgent, json };
  return json;
}

/**
 * The `subjects` object of an identity. Written once per identity that authentication reuses
 * (frozen, one per token), so requests with the same token share the text.
 */
const subjectsOfIdentity = new WeakMap<Identity, string>();
function subjectsJson(identity: Identity): string {
  const known = subjectsOfIdentity.get(identity);
  if (known !== undefined) return known;
  if (identity.anonymous !== undefined) {
    const presented = JSON.stringify(identity.anonymous.presented);
    return `{"user_id":"anonymous","user":"anonymous","anonymous":true,"presented":${presented}}`;
  }
  const user =
    identity.name ?? stringClaim(identity.claims.preferred_username) ?? identity.email ?? identity.subject;
  let json = `{"user_id":${JSON.stringify(identity.subject)},"user":${JSON.stringify(user)}`;
  if (identity.email) json += `,"email":${JSON.stringify(identity.email)}`;
  if (identity.local) json += ',"local":true';
  json += '}';
  if (Object.isFrozen(identity) && Object.isFrozen(identity.claims)) subjectsOfIdentity.set(identity, json);
  return json;
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
