/**
 * An exchange summary as OpenTelemetry names it: span name and attributes by the semantic
 * conventions for MCP (server side), ToolHive's legacy names when asked, and the outcome. Pure.
 * The proxy's thread reduces a summary to ExchangeFacts (primitives only, so they cross to the
 * telemetry worker cheaply); the worker names them.
 */
import {
  errorResponses,
  type ExchangeSummary,
  type GuardrailFinding,
  type ResponseNeed,
} from '../mcp/exchange.js';

export type Attributes = Record<string, string | number | boolean>;

/** What telemetry reads of an exchange: plain values, structured-clone friendly. */
export interface ExchangeFacts {
  httpMethod: string;
  path: string;
  status: number;
  started: number;
  ended: number;
  clientAddress: string;
  clientPort?: number;
  userAgent?: string;
  transport: string;
  responseBytes: number;
  requestBytes?: number;
  httpVersion?: string;
  protocolVersion?: string;
  method?: string;
  target?: string;
  /** The member workload behind an aggregate endpoint, when known (`moat.backend`). */
  backend?: string;
  /** The JSON-RPC request id, as a string. */
  id?: string;
  sessionId?: string;
  rpcErrorCode?: number;
  deniedBy?: string;
  /** What the guardrails found (detector, direction, action; never where or the value). */
  guardrails?: ReadonlyArray<Omit<GuardrailFinding, 'path'>>;
  /** errorType's answer. */
  error?: string;
}

/**
 * The facts of an exchange (the part of its summary telemetry reads). One literal with every
 * field, an absent one as undefined: adding the optional fields one by one grew the object's
 * property store several times per exchange (about 0.3 KB of garbage for every request).
 */
export function exchangeFacts(summary: ExchangeSummary): ExchangeFacts {
  const { record } = summary;
  return {
    httpMethod: summary.httpMethod,
    path: summary.path,
    status: summary.status,
    started: summary.started,
    ended: summary.ended,
    clientAddress: summary.clientAddress,
    clientPort: summary.clientPort,
    userAgent: summary.userAgent,
    transport: summary.transport,
    responseBytes: summary.responseBytes,
    requestBytes: summary.requestBody?.length,
    httpVersion: summary.httpVersion,
    protocolVersion: protocolVersion(summary),
    method: record.method,
    target: record.target,
    backend: record.backend,
    id: record.id === undefined ? undefined : String(record.id),
    sessionId: record.sessionId,
    rpcErrorCode: record.rpcErrorCode,
    deniedBy: record.deniedBy,
    guardrails: record.guardrailFindings?.map(({ detector, direction, action }) => ({
      detector,
      direction,
      action,
    })),
    error: errorType(summary),
  };
}

/** Targets low in cardinality enough for span names and metric attributes (not resource URIs). */
const NAMED_TARGET: Record<string, string> = {
  'tools/call': 'gen_ai.tool.name',
  'prompts/get': 'gen_ai.prompt.name',
};

const RESOURCE_METHODS = new Set(['resources/read', 'resources/subscribe', 'resources/unsubscribe']);

/** `{mcp.method.name} {target}`, or the method alone when there is no low-cardinality target. */
export function spanName(method: string, target: string | undefined): string {
  return target !== undefined && NAMED_TARGET[method] ? `${method} ${target}` : method;
}

/**
 * Why the exchange failed, as `error.type`: the JSON-RPC error code, `tool_error` for a tool
 * result with `isError`, or the HTTP status of a refusal; undefined when it succeeded.
 */
export function errorType(summary: ExchangeSummary): string | undefined {
  const { record } = summary;
  if (record.rpcErrorCode !== undefined) return String(record.rpcErrorCode);
  const result = record.response?.result;
  if (typeof result === 'object' && result !== null && (result as { isError?: unknown }).isError === true)
    return 'tool_error';
  if (summary.status >= 400) return String(summary.status);
  return undefined;
}

/**
 * The answers errorType needs parsed: possible JSON-RPC errors, and tool results that may say
 * `isError`. Every other answer passes through the proxy unparsed.
 */
export const outcomeResponses: ResponseNeed = (method, text) =>
  errorResponses(method, text) ||
  (method === 'tools/call' && text.includes('"isError"')) ||
  // The negotiated protocol version (once per session).
  method === 'initialize';

/**
 * The MCP revision in use: the client's MCP-Protocol-Version header, or for initialize the
 * version the server agreed to (else the one the client asked for).
 */
export function protocolVersion(summary: ExchangeSummary): string | undefined {
  if (summary.protocolVersion !== undefined) return summary.protocolVersion;
  if (summary.record.method !== 'initialize') return undefined;
  const result = summary.record.response?.result as { protocolVersion?: unknown } | undefined;
  if (typeof result?.protocolVersion === 'string') return result.protocolVersion;
  return summary.record.requestedProtocolVersion;
}

/**
 * A string naming the operation-duration series of an exchange: the values metricAttributes
 * reads, so equal keys mean equal attributes (NUL cannot occur in them as JSON strings do).
 */
export function metricKey(f: ExchangeFacts): string {
  const named = f.method !== undefined && NAMED_TARGET[f.method] !== undefined;
  return `${f.method ?? f.httpMethod}\u0000${named ? (f.target ?? '') : ''}\u0000${f.error ?? ''}\u0000${f.protocolVersion ?? ''}\u0000${f.httpVersion ?? ''}`;
}

/** The attributes of the operation-duration metric: low cardinality only. */
export function metricAttributes(f: ExchangeFacts): Attributes {
  const attributes: Attributes = { 'mcp.method.name': f.method ?? f.httpMethod };
  const targetKey = f.method && NAMED_TARGET[f.method];
  if (targetKey && f.target !== undefined) attributes[targetKey] = f.target;
  if (f.error !== undefined) attributes['error.type'] = f.error;
  if (f.protocolVersion !== undefined) attributes['mcp.protocol.version'] = f.protocolVersion;
  attributes['network.transport'] = 'tcp';
  attributes['network.protocol.name'] = 'http';
  if (f.httpVersion !== undefined) attributes['network.protocol.version'] = f.httpVersion;
  return attributes;
}

export function spanAttributes(f: ExchangeFacts, legacy: boolean): Attributes {
  const method = f.method ?? f.httpMethod;
  const a: Attributes = {
    'mcp.method.name': method,
    'jsonrpc.protocol.version': '2.0',
    'rpc.system.name': 'jsonrpc',
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
    'http.request.method': f.httpMethod,
    'url.path': f.path,
    'http.response.status_code': f.status,
    'http.response.body.size': f.responseBytes,
    'client.address': f.clientAddress,
    'mcp.transport': f.transport,
  };
  if (f.id !== undefined) a['jsonrpc.request.id'] = f.id;
  if (f.sessionId !== undefined) a['mcp.session.id'] = f.sessionId;
  if (f.userAgent !== undefined) a['user_agent.original'] = f.userAgent;
  if (f.clientPort !== undefined) a['client.port'] = f.clientPort;
  if (f.httpVersion !== undefined) a['network.protocol.version'] = f.httpVersion;
  if (f.protocolVersion !== undefined) a['mcp.protocol.version'] = f.protocolVersion;
  if (f.requestBytes !== undefined) a['http.request.body.size'] = f.requestBytes;
  const targetKey = NAMED_TARGET[method];
  if (f.target !== undefined) {
    if (targetKey) a[targetKey] = f.target;
    if (RESOURCE_METHODS.has(method)) a['mcp.resource.uri'] = f.target;
  }
  if (method === 'tools/call') a['gen_ai.operation.name'] = 'execute_tool';
  if (f.rpcErrorCode !== undefined) a['rpc.response.status_code'] = String(f.rpcErrorCode);
  if (f.error !== undefined) a['error.type'] = f.error;
  if (f.deniedBy !== undefined) a['moat.policy.denied_by'] = f.deniedBy;
  if (f.backend !== undefined) a['moat.backend'] = f.backend;
  if (legacy) Object.assign(a, legacyAttributes(f));
  return a;
}

/** ToolHive's attribute names before the MCP conventions existed (`--otel-use-legacy-attributes`). */
function legacyAttributes(f: ExchangeFacts): Attributes {
  const a: Attributes = {
    'http.method': f.httpMethod,
    'http.target': f.path,
    'http.status_code': f.status,
    'http.response_content_length': f.responseBytes,
    'http.duration_ms': f.ended - f.started,
    'rpc.system': 'jsonrpc',
    'rpc.service': 'mcp',
    'mcp.transport': f.transport,
  };
  if (f.userAgent !== undefined) a['http.user_agent'] = f.userAgent;
  if (f.requestBytes !== undefined) a['http.request_content_length'] = f.requestBytes;
  if (f.method !== undefined) a['mcp.method'] = f.method;
  if (f.id !== undefined) a['mcp.request.id'] = f.id;
  if (f.target !== undefined) {
    a['mcp.resource.id'] = f.target;
    if (f.method === 'tools/call') a['mcp.tool.name'] = f.target;
    if (f.method === 'prompts/get') a['mcp.prompt.name'] = f.target;
  }
  return a;
}

/** Whether the exchange changes a counter: a denial, a 5xx, a session opened or ended (most: no). */
export function changesCounters(f: ExchangeFacts): boolean {
  return f.deniedBy !== undefined || f.status >= 500 || sessionChange(f) !== 0 || f.guardrails !== undefined;
}

/** +1 for a session opened, -1 for one the client ended, else 0. */
export function sessionChange(f: ExchangeFacts): number {
  if (f.sessionId === undefined || f.status >= 300) return 0;
  if (f.method === 'initialize') return 1;
  return f.httpMethod === 'DELETE' ? -1 : 0;
}
