/**
 * What a 2026-07-28 server refuses before doing anything, which Moat must refuse for a 2025 server
 * that knows none of it: methods that are not part of 2026-07-28 (the removed `initialize`,
 * `ping`, `logging/setLevel`, `resources/subscribe`… and unknown ones: 404, -32601), and a
 * request `_meta` envelope that is missing, names another revision, or disagrees with the
 * `MCP-Protocol-Version` header.
 */
import { isRequest, RPC, type JsonRpcMessage, type JsonRpcRequest } from '../../../mcp/jsonrpc.js';
import { reject, type ProxyRejection } from '../../pipeline/errors.js';
import { META, STATELESS_REVISION } from '../../../mcp/revisions.js';
import { isObject } from '../../../util/is-object.js';

const MODERN_METHODS = new Set([
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

/** Throws the refusal for a bridged request a 2026-07-28 server would refuse. */
export function checkEnvelope(message: JsonRpcMessage, headerVersion: string | undefined): void {
  if (!isRequest(message)) return;
  const refusal = envelopeRefusal(message, headerVersion);
  if (refusal) throw refusal;
}

/** The refusal for a bridged request a 2026-07-28 server would refuse, or undefined. */
export function envelopeRefusal(
  request: JsonRpcRequest,
  headerVersion: string | undefined,
): ProxyRejection | undefined {
  const id = request.id;
  if (!MODERN_METHODS.has(request.method)) {
    return reject(
      404,
      RPC.methodNotFound,
      `Method not found: ${request.method} (MCP ${STATELESS_REVISION})`,
      {
        id,
      },
    );
  }
  const meta = request.params?._meta;
  const missing = [META.protocolVersion, META.clientCapabilities].filter(
    (key) => !isObject(meta) || !(key in meta),
  );
  if (!isObject(meta) || missing.length > 0) {
    return reject(
      400,
      RPC.invalidParams,
      `Invalid params: the request _meta lacks ${missing.join(' and ')}`,
      { id },
    );
  }
  const version = meta[META.protocolVersion];
  if (headerVersion !== undefined && headerVersion !== version) {
    return reject(
      400,
      RPC.headerMismatch,
      `MCP-Protocol-Version header "${headerVersion}" does not match the request _meta protocolVersion "${String(version)}"`,
      { id },
    );
  }
  if (version !== STATELESS_REVISION) {
    return reject(400, RPC.unsupportedProtocolVersion, `Unsupported protocol version: ${String(version)}`, {
      id,
      data: { supported: [STATELESS_REVISION], requested: version },
    });
  }
  if (!isObject(meta[META.clientCapabilities])) {
    return reject(400, RPC.invalidParams, `Invalid params: ${META.clientCapabilities} must be an object`, {
      id,
    });
  }
  return undefined;
}

/**
 * The HTTP status the 2026-07-28 HTTP binding gives a server's JSON-RPC error answer, for a server
 * without HTTP of its own (stdio): removed or unknown methods 404; a refused envelope, header or
 * missing client capability 400; anything else the JSON-RPC error in a 200.
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
