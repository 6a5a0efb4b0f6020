/**
 * What a 2026-07-28 server refuses before doing anything: methods that are not part of 2026-07-28
 * (the removed `initialize`, `ping`, `logging/setLevel`, `resources/subscribe`… and unknown ones:
 * 404, -32601), and a request `_meta` envelope that is missing, names another revision, or
 * disagrees with the `MCP-Protocol-Version` header. Shared by the proxy's era bridge (for a 2025
 * server that knows none of it) and the aggregator's 2026-07-28 face.
 */
import { RPC, type JsonRpcError, type JsonRpcRequest } from './jsonrpc.js';
import { META, STATELESS_REVISION } from './revisions.js';
import { isObject } from '../util/is-object.js';

export const MODERN_METHODS: ReadonlySet<string> = new Set([
  'tools/call',
  'tools/list',
  'prompts/get',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'server/discover',
  'subscriptions/listen',
]);

/** A refusal: the HTTP status and the JSON-RPC error the request gets. */
export interface EnvelopeProblem {
  httpStatus: number;
  error: JsonRpcError;
}

const problem = (httpStatus: number, code: number, message: string, data?: unknown): EnvelopeProblem => ({
  httpStatus,
  error: data === undefined ? { code, message } : { code, message, data },
});

/** The refusal for a request a 2026-07-28 server would refuse, or undefined. */
export function envelopeProblem(
  request: JsonRpcRequest,
  headerVersion: string | undefined,
): EnvelopeProblem | undefined {
  if (!MODERN_METHODS.has(request.method)) {
    return problem(
      404,
      RPC.methodNotFound,
      `Method not found: ${request.method} (MCP ${STATELESS_REVISION})`,
    );
  }
  const meta = request.params?._meta;
  const missing = [META.protocolVersion, META.clientCapabilities].filter(
    (key) => !isObject(meta) || !(key in meta),
  );
  if (!isObject(meta) || missing.length > 0) {
    return problem(
      400,
      RPC.invalidParams,
      `Invalid params: the request _meta lacks ${missing.join(' and ')}`,
    );
  }
  const version = meta[META.protocolVersion];
  if (headerVersion !== undefined && headerVersion !== version) {
    return problem(
      400,
      RPC.headerMismatch,
      `MCP-Protocol-Version header "${headerVersion}" does not match the request _meta protocolVersion "${String(version)}"`,
    );
  }
  if (version !== STATELESS_REVISION) {
    return problem(400, RPC.unsupportedProtocolVersion, `Unsupported protocol version: ${String(version)}`, {
      supported: [STATELESS_REVISION],
      requested: version,
    });
  }
  if (!isObject(meta[META.clientCapabilities])) {
    return problem(400, RPC.invalidParams, `Invalid params: ${META.clientCapabilities} must be an object`);
  }
  return undefined;
}

/**
 * The HTTP status the 2026-07-28 HTTP binding gives a server's JSON-RPC error answer, for a server
 * without HTTP of its own: removed or unknown methods 404; a refused envelope, header or missing
 * client capability 400; anything else the JSON-RPC error in a 200.
 */
export function httpStatusOfError(code: number): number {
  if (code === RPC.methodNotFound) return 404;
  const refusals: number[] = [
    RPC.headerMismatch,
    RPC.missingClientCapability,
    RPC.unsupportedProtocolVersion,
  ];
  return refusals.includes(code) ? 400 : 200;
}
