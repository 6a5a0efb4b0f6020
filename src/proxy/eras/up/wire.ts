/**
 * The 2026-07-28 wire as a 2025-era session sees it through the proxy: the per-request `_meta`
 * envelope built from the session's `initialize`, the standard headers of each forwarded request,
 * and the translation of answers back (no `resultType`; `initialize` from `server/discover`).
 */
import { RPC, type JsonRpcRequest, type JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import {
  LATEST_SESSION_REVISION,
  META,
  SESSION_REVISIONS,
  STATELESS_REVISION,
} from '../../../mcp/revisions.js';
import { isObject } from '../../../util/is-object.js';

/** What a 2025-era client said about itself at `initialize`: sent with every request it makes. */
export interface ClientFacts {
  clientInfo: Record<string, unknown>;
  capabilities: Record<string, unknown>;
  /** The level `logging/setLevel` asked for, sent as the per-request log level. */
  logLevel?: string;
}

/** The client's facts from its `initialize` params (unknown shapes become empty objects). */
export function clientFactsOf(params: Record<string, unknown> | undefined): ClientFacts {
  return {
    clientInfo: isObject(params?.clientInfo) ? params.clientInfo : { name: 'unknown', version: '0' },
    capabilities: isObject(params?.capabilities) ? params.capabilities : {},
  };
}

/** The revision the proxy agrees to: the client's when the proxy speaks it, else the newest 2025 one. */
export function negotiatedRevision(requested: unknown): string {
  return typeof requested === 'string' && SESSION_REVISIONS.includes(requested)
    ? requested
    : LATEST_SESSION_REVISION;
}

/** The request as a 2026-07-28 server expects it: the session's facts in `params._meta`. */
export function withEnvelope(request: JsonRpcRequest, facts: ClientFacts): JsonRpcRequest {
  const params = request.params ?? {};
  const meta = isObject(params._meta) ? params._meta : {};
  return {
    ...request,
    params: {
      ...params,
      _meta: {
        ...meta,
        [META.protocolVersion]: STATELESS_REVISION,
        [META.clientInfo]: facts.clientInfo,
        [META.clientCapabilities]: facts.capabilities,
        ...(facts.logLevel === undefined ? {} : { [META.logLevel]: facts.logLevel }),
      },
    },
  };
}

/** Which body field `Mcp-Name` carries, per method. */
const NAME_FIELD: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/** A header value: as is when visible ASCII, else in the Base64 sentinel. */
export function headerText(value: string): string {
  return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value)
    ? value
    : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The standard 2026-07-28 headers of a request: version, `Mcp-Method`, and `Mcp-Name` where defined. */
export function standardHeaders(request: JsonRpcRequest): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': STATELESS_REVISION,
    'mcp-method': request.method,
  };
  const field = NAME_FIELD[request.method];
  const name = field === undefined ? undefined : request.params?.[field];
  if (typeof name === 'string') headers['mcp-name'] = headerText(name);
  return headers;
}

/** A 2026 answer as a 2025-era client reads it: `resultType` removed from results. */
export function sessionEraAnswer(response: JsonRpcResponse): JsonRpcResponse {
  if (!isObject(response.result) || !('resultType' in response.result)) return response;
  const { resultType: _dropped, ...result } = response.result;
  return { ...response, result };
}

/** Whether a result asks the client for input (a multi round-trip request). */
export function isInputRequired(response: JsonRpcResponse): boolean {
  return isObject(response.result) && response.result.resultType === 'input_required';
}

/** `initialize`'s answer, made from the backend's `server/discover` result. */
export function initializeAnswer(
  id: JsonRpcRequest['id'],
  discovered: Record<string, unknown>,
  revision: string,
): JsonRpcResponse {
  const { capabilities, instructions } = discovered;
  // 2026-07-28 servers name themselves in the result's `_meta` (older drafts: `serverInfo`).
  const meta = isObject(discovered._meta) ? discovered._meta : {};
  const serverInfo = meta['io.modelcontextprotocol/serverInfo'] ?? discovered.serverInfo;
  return {
    jsonrpc: '2.0',
    id,
    result: {
      protocolVersion: revision,
      capabilities: isObject(capabilities) ? capabilities : {},
      serverInfo: isObject(serverInfo) ? serverInfo : { name: 'mcp-server', version: '0' },
      ...(typeof instructions === 'string' ? { instructions } : {}),
    },
  };
}

/** The JSON-RPC error answer for `id`. */
export function errorAnswer(
  id: JsonRpcRequest['id'],
  message: string,
  code: number = RPC.internalError,
): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
