/**
 * Input requests as the 2026-07-28 wire carries them, and whether the client declared it can
 * answer them. A 2026 client declares its capabilities per request (`_meta` clientCapabilities);
 * a kind it did not declare is never asked of it: the backend's request gets a JSON-RPC error
 * instead, as a 2025 client without the capability would answer.
 */
import { RPC, type JsonRpcError } from '../../mcp/jsonrpc.js';
import type { BackendInputRequest } from '../bridge/seam.js';

/** The capability each input kind needs. */
const CAPABILITY: Record<BackendInputRequest['method'], string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** What a 2025-era server may ask during a request when MRTR can carry it (the backend session's capabilities). */
export const CARRIED_CAPABILITIES: Record<string, unknown> = {
  elicitation: { form: {}, url: {} },
  sampling: {},
  roots: {},
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Elicitation: `{}` means form mode only; `{form?, url?}` names the modes. */
function elicitationModeDeclared(declared: unknown, mode: unknown): boolean {
  if (!isObject(declared)) return false;
  const wanted = mode === 'url' ? 'url' : 'form';
  const named = 'form' in declared || 'url' in declared;
  return named ? isObject(declared[wanted]) : wanted === 'form';
}

/** The error for the backend when the client did not declare the kind; undefined when it did. */
export function undeclaredInput(
  input: BackendInputRequest,
  caps: Record<string, unknown>,
): JsonRpcError | undefined {
  const capability = CAPABILITY[input.method];
  const declared =
    capability === 'elicitation'
      ? elicitationModeDeclared(caps.elicitation, input.params.mode)
      : isObject(caps[capability]);
  if (declared) return undefined;
  return {
    code: RPC.methodNotFound,
    message: `The client did not declare the ${capability} capability${capability === 'elicitation' && input.params.mode === 'url' ? ' (url mode)' : ''} for this request`,
  };
}

/** The key of an input request: its kind and a counter unique within the request's rounds. */
export function inputKey(input: BackendInputRequest, n: number): string {
  return `${CAPABILITY[input.method]}-${n}`;
}

/** An input request as the 2026-07-28 wire carries it: the server's request without JSON-RPC framing. */
export function embeddedRequest(input: BackendInputRequest): {
  method: string;
  params: Record<string, unknown>;
} {
  return { method: input.method, params: input.params };
}
