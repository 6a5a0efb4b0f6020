/** Raw 2026-07-28 requests for the multi round-trip (MRTR) tests: one POST, its answer. */
import { messageOfAnswer, post } from './proxy-harness.js';

export const MODERN = '2026-07-28';
/** Every input kind MRTR carries, as a client declares them per request. */
export const ALL_INPUTS = { elicitation: {}, sampling: {}, roots: {} };

export interface MrtrAnswer {
  id?: unknown;
  result?: {
    resultType?: string;
    inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
    requestState?: string;
    content?: Array<{ type: string; text?: string }>;
    messages?: unknown[];
    isError?: boolean;
  };
  error?: { code: number; message: string; data?: { reason?: string; requiredCapabilities?: unknown } };
}

let nextId = 1;

/** One 2026-07-28 request (headers mirrored, `_meta` envelope); its HTTP status and JSON-RPC answer. */
export async function sendModern(
  endpoint: string,
  method: string,
  params: Record<string, unknown>,
  options: { token?: string; capabilities?: Record<string, unknown> } = {},
): Promise<{ status: number; answer: MrtrAnswer }> {
  const name =
    typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const res = await post(
    endpoint,
    {
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? ALL_INPUTS,
        },
      },
    },
    {
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    },
  );
  return { status: res.status, answer: messageOfAnswer<MrtrAnswer>(res.text) };
}

/** An accepted elicitation answer. */
export const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });
