/**
 * MCP 2026-07-28 custom headers (SEP-2243): a tool's input schema may mark primitive properties
 * with `x-mcp-header: Name`; a client then mirrors that argument into an `Mcp-Param-Name` header
 * (Base64 in `=?base64?…?=` when not plain ASCII), so HTTP infrastructure can route on it. The
 * header is only safe to route on when it equals the body, which is what this module checks.
 */
import { RPC, type JsonRpcError } from '../../../mcp/jsonrpc.js';
import { isObject } from '../../../util/is-object.js';

export interface ParamHeaderDeclaration {
  /** The property path inside `arguments` (a chain of `properties` keys). */
  path: readonly string[];
  /** The header suffix: the request header is `Mcp-Param-<headerName>`. */
  headerName: string;
  type: 'string' | 'integer' | 'boolean' | 'number';
}

const X_MCP_HEADER = 'x-mcp-header';
/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = new Set(['string', 'integer', 'boolean', 'number']);
const MAX_DEPTH = 32;

/**
 * The `x-mcp-header` declarations of an input schema, reached through `properties` only (the
 * spec allows no other position). A declaration the spec calls invalid (not a token, not a
 * primitive, a duplicate name) is skipped: clients drop such tools, and there is nothing to
 * compare. `number` is kept although the spec forbids it, as the reference SDK keeps checking it.
 */
export function paramHeaderDeclarations(inputSchema: unknown): ParamHeaderDeclaration[] {
  const found: ParamHeaderDeclaration[] = [];
  const seen = new Set<string>();
  const visit = (schema: unknown, path: string[]): void => {
    if (!isObject(schema) || path.length > MAX_DEPTH) return;
    const name = schema[X_MCP_HEADER];
    const type = schema.type;
    if (
      path.length > 0 &&
      typeof name === 'string' &&
      TOKEN.test(name) &&
      typeof type === 'string' &&
      HEADER_TYPES.has(type) &&
      !seen.has(name.toLowerCase())
    ) {
      seen.add(name.toLowerCase());
      found.push({ path, headerName: name, type: type as ParamHeaderDeclaration['type'] });
    }
    if (isObject(schema.properties)) {
      for (const [key, child] of Object.entries(schema.properties)) visit(child, [...path, key]);
    }
  };
  visit(inputSchema, []);
  return found;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header value as the client meant it: the Base64 sentinel's payload decoded, anything else
 * literal. Undefined for a sentinel whose payload is not canonical Base64 or not UTF-8.
 */
export function decodeParamValue(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const payload = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return utf8.decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

/** How a primitive argument is written in its header; undefined: no header is expected. */
function asHeaderText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

function mismatch(header: string, body: string): JsonRpcError {
  return {
    code: RPC.headerMismatch,
    message: `Bad Request: the request headers and body disagree: ${body}`,
    data: { mismatch: { header, body } },
  };
}

/**
 * Checks each declared argument against its `Mcp-Param-*` header: a value in the body needs the
 * header, decoding to the same value (numbers compared as numbers); a null or absent value needs
 * none (a header sent anyway is ignored). Returns the JSON-RPC error for the first disagreement.
 */
export function paramHeaderProblem(
  declarations: readonly ParamHeaderDeclaration[],
  args: unknown,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): JsonRpcError | undefined {
  for (const declaration of declarations) {
    const header = `Mcp-Param-${declaration.headerName}`;
    const bodyValue = valueAt(args, declaration.path);
    const expected = bodyValue === null ? undefined : asHeaderText(bodyValue);
    if (expected === undefined) continue;
    const where = declaration.path.join('.');
    const raw = headers[header.toLowerCase()];
    const sent = Array.isArray(raw) ? raw.join(', ') : raw;
    if (sent === undefined) {
      return mismatch(
        header,
        `the body carries ${where}=${JSON.stringify(bodyValue)} but the ${header} header is absent`,
      );
    }
    const decoded = decodeParamValue(sent);
    if (decoded === undefined)
      return mismatch(header, `the ${header} header carries an invalid Base64 value`);
    const numeric = declaration.type !== 'string' && typeof bodyValue === 'number' && DECIMAL.test(decoded);
    if (numeric ? Number(decoded) !== bodyValue : decoded !== expected) {
      return mismatch(
        header,
        `the ${header} header decodes to ${JSON.stringify(decoded)} but the body carries ${where}=${JSON.stringify(bodyValue)}`,
      );
    }
  }
  return undefined;
}

/** The `Mcp-Param-*` headers a 2026-07-28 client would send for these arguments (for a 2025-era one). */
export function paramHeadersFor(
  declarations: readonly ParamHeaderDeclaration[],
  args: unknown,
  encode: (value: string) => string,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const declaration of declarations) {
    const value = valueAt(args, declaration.path);
    const text = value === null ? undefined : asHeaderText(value);
    if (text !== undefined) headers[`mcp-param-${declaration.headerName.toLowerCase()}`] = encode(text);
  }
  return headers;
}
