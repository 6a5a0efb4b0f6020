/**
 * The 2026-07-28 ⇄ 2025-11-25 translation of single messages: what a bridged request looks like
 * to a 2025-era server, and what its answers look like to the 2026-07-28 client. Pure functions.
 */
import { RPC, type JsonRpcRequest, type JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import { LATEST_SESSION_REVISION, META, STATELESS_REVISION } from '../../../mcp/revisions.js';
import { isObject } from '../../../util/is-object.js';

/** Results that carry the 2026-07-28 caching fields (`ttlMs`, `cacheScope`). */
const CACHEABLE = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

/** MCP log levels, most verbose first (RFC 5424 severities). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

function metaOf(request: JsonRpcRequest): Record<string, unknown> | undefined {
  const meta = request.params?._meta;
  return isObject(meta) ? meta : undefined;
}

/** `_meta` clientCapabilities of a 2026-07-28 request (empty when absent). */
export function clientCapabilitiesOf(request: JsonRpcRequest): Record<string, unknown> {
  const caps = metaOf(request)?.[META.clientCapabilities];
  return isObject(caps) ? caps : {};
}

/** The log level a 2026-07-28 request asked for in `_meta`, when it names a known one. */
export function requestedLogLevel(request: JsonRpcRequest): string | undefined {
  const level = metaOf(request)?.[META.logLevel];
  return typeof level === 'string' && LOG_LEVELS.includes(level) ? level : undefined;
}

/** Whether a log message at `level` reaches a client that asked for `wanted`. */
export function logPasses(level: unknown, wanted: string): boolean {
  const rank = LOG_LEVELS.indexOf(String(level));
  return rank === -1 || rank >= LOG_LEVELS.indexOf(wanted);
}

/** Client notifications a 2025 server must not see from a 2026 client (accepted and dropped). */
export function isDroppedNotification(method: string): boolean {
  return method === 'notifications/initialized' || method === 'notifications/roots/list_changed';
}

/** The request as a 2025-11-25 server expects it: the 2026 envelope keys leave `_meta`. */
export function toSessionEraRequest(request: JsonRpcRequest): JsonRpcRequest {
  const meta = metaOf(request);
  if (!meta) return request;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (!key.startsWith('io.modelcontextprotocol/')) kept[key] = value;
  }
  const params: Record<string, unknown> = { ...request.params };
  if (Object.keys(kept).length > 0) params._meta = kept;
  else delete params._meta;
  return { ...request, params };
}

/**
 * A 2025 server's result in 2026-07-28 shape: `resultType: "complete"`, the caching fields on
 * cacheable results (no caching: `ttlMs` 0, `private`, as the server gave no hint), the server's
 * identity in `_meta`, and the deleted `tasks`/`execution` vocabulary removed.
 */
export function toStatelessResult(
  method: string,
  result: unknown,
  serverInfo: unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = isObject(result) ? { ...result } : {};
  if (out.resultType === undefined) out.resultType = 'complete';
  if (CACHEABLE.has(method) && out.resultType === 'complete') {
    if (typeof out.ttlMs !== 'number') out.ttlMs = 0;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = 'private';
  }
  if (isObject(out.capabilities) && 'tasks' in out.capabilities) {
    const { tasks: _tasks, ...rest } = out.capabilities;
    out.capabilities = rest;
  }
  if (method === 'tools/list' && Array.isArray(out.tools)) {
    out.tools = out.tools.map((tool: unknown) => {
      if (!isObject(tool) || !('execution' in tool)) return tool;
      const { execution: _execution, ...rest } = tool;
      return rest;
    });
  }
  if (serverInfo !== undefined) {
    const meta = isObject(out._meta) ? out._meta : {};
    if (meta[META.serverInfo] === undefined) out._meta = { ...meta, [META.serverInfo]: serverInfo };
  }
  return out;
}

/** A 2025 server's answer to a bridged request, in 2026-07-28 shape. */
export function toStatelessResponse(
  method: string,
  response: JsonRpcResponse,
  serverInfo: unknown,
): JsonRpcResponse {
  if (response.error) {
    // 2026-07-28: a resources/read miss is Invalid Params, not the old -32002.
    return response.error.code === -32002
      ? { ...response, error: { ...response.error, code: RPC.invalidParams } }
      : response;
  }
  return { ...response, result: toStatelessResult(method, response.result, serverInfo) };
}

/** The `server/discover` result a 2025 server's `initialize` result stands for. */
export function discoverResult(init: Record<string, unknown>): Record<string, unknown> {
  const supportedVersions = [STATELESS_REVISION];
  return toStatelessResult(
    'server/discover',
    {
      supportedVersions,
      capabilities: isObject(init.capabilities) ? init.capabilities : {},
      ...(typeof init.instructions === 'string' ? { instructions: init.instructions } : {}),
      ...(init.serverInfo === undefined ? {} : { serverInfo: init.serverInfo }),
    },
    init.serverInfo,
  );
}

/** The initialize request Moat sends a 2025 server on behalf of 2026-07-28 clients. */
export function sessionEraInitialize(
  id: number | string,
  capabilities: Record<string, unknown>,
): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_SESSION_REVISION,
      capabilities,
      clientInfo: { name: 'moat-era-bridge', version: '1' },
    },
  };
}
