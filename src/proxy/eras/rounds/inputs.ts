/**
 * Input requests as the 2026-07-28 wire carries them, and whether the client declared it can
 * answer them. A 2026 client declares its capabilities per request (`_meta` clientCapabilities);
 * a kind it did not declare is never asked of it: the backend's request gets a JSON-RPC error
 * instead, as a 2025 client without the capability would answer.
 */
import { RPC, type JsonRpcError } from '../../../mcp/jsonrpc.js';
import type { BackendInputRequest } from '../down/seam.js';
import { isObject } from '../../../util/is-object.js';

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

/** Elicitation: `{}` means form mode only; `{form?, url?}` names the modes. */
function elicitationModeDeclared(declared: unknown, mode: unknown): boolean {
  if (!isObject(declared)) return false;
  const wanted = mode === 'url' ? 'url' : 'form';
  const named = 'form' in declared || 'url' in declared;
  return named ? isObject(declared[wanted]) : wanted === 'form';
}

/**
 * The capability the client would have to declare for `input` (in the ClientCapabilities shape,
 * e.g. `{ elicitation: { url: {} } }`), or undefined when it declared it.
 */
export function missingCapability(
  input: BackendInputRequest,
  caps: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const capability = CAPABILITY[input.method];
  if (capability === 'elicitation') {
    const mode = input.params.mode === 'url' ? 'url' : 'form';
    return elicitationModeDeclared(caps.elicitation, mode) ? undefined : { elicitation: { [mode]: {} } };
  }
  return isObject(caps[capability]) ? undefined : { [capability]: {} };
}

/** What the backend's input request is answered with when the client did not declare its kind. */
export function undeclaredError(missing: Record<string, unknown>): JsonRpcError {
  return {
    code: RPC.methodNotFound,
    message: `The client did not declare the ${Object.keys(missing).join(', ')} capability for this request`,
  };
}

/**
 * A key the backend may choose for an input request (`params._meta["moat.dev/inputKey"]`), so a
 * server written for Moat gets stable, readable keys; anything else gets `<kind>-<n>`.
 */
export const INPUT_KEY_META = 'moat.dev/inputKey';
const KEY_FORM = /^[A-Za-z0-9_.-]{1,64}$/;

function chosenKey(input: BackendInputRequest): string | undefined {
  const meta = input.params._meta;
  const key = isObject(meta) ? meta[INPUT_KEY_META] : undefined;
  return typeof key === 'string' && KEY_FORM.test(key) ? key : undefined;
}

/** The key of an input request: the backend's choice when free, else its kind and a counter. */
export function inputKey(input: BackendInputRequest, n: number, taken: (key: string) => boolean): string {
  const chosen = chosenKey(input);
  return chosen !== undefined && !taken(chosen) ? chosen : `${CAPABILITY[input.method]}-${n}`;
}

/** An input request as the 2026-07-28 wire carries it: the server's request without JSON-RPC framing. */
export function embeddedRequest(input: BackendInputRequest): {
  method: string;
  params: Record<string, unknown>;
} {
  const { _meta: meta, ...params } = input.params;
  if (!isObject(meta) || !(INPUT_KEY_META in meta)) return { method: input.method, params: input.params };
  const { [INPUT_KEY_META]: _key, ...rest } = meta;
  return { method: input.method, params: Object.keys(rest).length > 0 ? { ...params, _meta: rest } : params };
}
