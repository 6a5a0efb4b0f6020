/**
 * The 2026-07-28 refusals (`mcp/envelope.ts`) as the proxy's rejections: what Moat must refuse for
 * a 2025 server that knows none of the 2026-07-28 rules.
 */
import { isRequest, type JsonRpcMessage, type JsonRpcRequest } from '../../../mcp/jsonrpc.js';
import { envelopeProblem } from '../../../mcp/envelope.js';
import { reject, type ProxyRejection } from '../../pipeline/errors.js';

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
  const found = envelopeProblem(request, headerVersion);
  if (!found) return undefined;
  const { code, message, data } = found.error;
  return reject(found.httpStatus, code, message, { id: request.id, ...(data === undefined ? {} : { data }) });
}
