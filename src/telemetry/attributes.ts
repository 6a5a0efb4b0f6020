/**
 * An exchange summary as OpenTelemetry names it: span name and attributes by the semantic
 * conventions for MCP (server side), ToolHive's legacy names when asked, and the outcome. Pure.
 */
import { errorResponses, type ExchangeSummary, type ResponseNeed } from '../mcp/exchange.js';

export type Attributes = Record<string, string | number | boolean>;

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
export function metricKey(summary: ExchangeSummary, error: string | undefined): string {
  const { method, target } = summary.record;
  const named = method !== undefined && NAMED_TARGET[method] !== undefined;
  return `${method ?? summary.httpMethod}\u0000${named ? (target ?? '') : ''}\u0000${error ?? ''}\u0000${protocolVersion(summary) ?? ''}\u0000${summary.httpVersion ?? ''}`;
}

/** The attributes of the operation-duration metric: low cardinality only. */
export function metricAttributes(summary: ExchangeSummary, error: string | undefined): Attributes {
  const { method, target } = summary.record;
  const attributes: Attributes = { 'mcp.method.name': method ?? summary.httpMethod };
  const targetKey = method && NAMED_TARGET[method];
  if (targetKey && target !== undefined) attributes[targetKey] = target;
  if (error !== undefined) attributes['error.type'] = error;
  const version = protocolVersion(summary);
  if (version !== undefined) attributes['mcp.protocol.version'] = version;
  attributes['network.transport'] = 'tcp';
  attributes['network.protocol.name'] = 'http';
  if (summary.httpVersion !== undefined) attributes['network.protocol.version'] = summary.httpVersion;
  return attributes;
}

export function spanAttributes(
  summary: ExchangeSummary,
  error: string | undefined,
  legacy: boolean,
): Attributes {
  const { record } = summary;
  const method = record.method ?? summary.httpMethod;
  const a: Attributes = {
    'mcp.method.name': method,
    'jsonrpc.protocol.version': '2.0',
    'rpc.system.name': 'jsonrpc',
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
    'http.request.method': summary.httpMethod,
    'url.path': summary.path,
    'http.response.status_code': summary.status,
    'http.response.body.size': summary.responseBytes,
    'client.address': summary.clientAddress,
    'mcp.transport': summary.transport,
  };
  if (record.id !== undefined) a['jsonrpc.request.id'] = String(record.id);
  if (record.sessionId !== undefined) a['mcp.session.id'] = record.sessionId;
  if (summary.userAgent !== undefined) a['user_agent.original'] = summary.userAgent;
  if (summary.clientPort !== undefined) a['client.port'] = summary.clientPort;
  if (summary.httpVersion !== undefined) a['network.protocol.version'] = summary.httpVersion;
  const version = protocolVersion(summary);
  if (version !== undefined) a['mcp.protocol.version'] = version;
  if (summary.requestBody !== undefined) a['http.request.body.size'] = summary.requestBody.length;
  const targetKey = NAMED_TARGET[method];
  if (record.target !== undefined) {
    if (targetKey) a[targetKey] = record.target;
    if (RESOURCE_METHODS.has(method)) a['mcp.resource.uri'] = record.target;
  }
  if (method === 'tools/call') a['gen_ai.operation.name'] = 'execute_tool';
  if (record.rpcErrorCode !== undefined) a['rpc.response.status_code'] = String(record.rpcErrorCode);
  if (error !== undefined) a['error.type'] = error;
  if (record.deniedBy !== undefined) a['moat.policy.denied_by'] = record.deniedBy;
  if (legacy) Object.assign(a, legacyAttributes(summary));
  return a;
}

/** ToolHive's attribute names before the MCP conventions existed (`--otel-use-legacy-attributes`). */
function legacyAttributes(summary: ExchangeSummary): Attributes {
  const { record } = summary;
  const a: Attributes = {
    'http.method': summary.httpMethod,
    'http.target': summary.path,
    'http.status_code': summary.status,
    'http.response_content_length': summary.responseBytes,
    'http.duration_ms': summary.ended - summary.started,
    'rpc.system': 'jsonrpc',
    'rpc.service': 'mcp',
    'mcp.transport': summary.transport,
  };
  if (summary.userAgent !== undefined) a['http.user_agent'] = summary.userAgent;
  if (summary.requestBody !== undefined) a['http.request_content_length'] = summary.requestBody.length;
  if (record.method !== undefined) a['mcp.method'] = record.method;
  if (record.id !== undefined) a['mcp.request.id'] = String(record.id);
  if (record.target !== undefined) {
    a['mcp.resource.id'] = record.target;
    if (record.method === 'tools/call') a['mcp.tool.name'] = record.target;
    if (record.method === 'prompts/get') a['mcp.prompt.name'] = record.target;
  }
  return a;
}
