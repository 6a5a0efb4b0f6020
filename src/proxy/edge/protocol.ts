/**
 * MCP protocol rules enforced at the edge for every transport: known protocol versions
 * (eras/revisions.ts), the POST-only stateless era, and the 2026-07-28 rule that
 * `Mcp-Method`/`Mcp-Name` mirror the body. A request's era is decided in eras/decision.ts.
 */
import type { IncomingMessage } from 'node:http';
import { reject } from '../pipeline/errors.js';
import { RPC, type JsonRpcMessage } from '../../mcp/jsonrpc.js';
import { isKnownRevision, REVISIONS } from '../../mcp/revisions.js';
import { protocolVersionOf } from '../eras/decision.js';

/** With strict validation, a present but unknown MCP-Protocol-Version is refused (absent is fine). */
export function checkProtocolVersion(req: IncomingMessage): void {
  const v = protocolVersionOf(req);
  if (v === undefined || isKnownRevision(v)) return;
  throw reject(400, RPC.unsupportedProtocolVersion, `Unsupported MCP-Protocol-Version: ${v}`, {
    data: { supported: [...REVISIONS], requested: v },
  });
}

/** A stateless server (or the stateless revision) serves POST only. */
export function checkStatelessMethod(req: IncomingMessage): void {
  if (req.method === 'POST' || req.method === 'OPTIONS') return;
  throw reject(
    405,
    RPC.invalidRequest,
    'Method not allowed: this MCP endpoint is stateless and accepts POST only',
    {
      headers: { allow: 'POST' },
    },
  );
}

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';

/** Decodes the 2026-07-28 Base64 sentinel (`=?base64?…?=`) used for non-ASCII header values. */
export function decodeHeaderValue(value: string): string {
  if (value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX)) {
    return Buffer.from(value.slice(BASE64_PREFIX.length, -BASE64_SUFFIX.length), 'base64').toString('utf8');
  }
  return value;
}

/** Which body field `Mcp-Name` mirrors, per method. */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * After a policy rewrote the message (a mutating webhook, tool search), makes the
 * `Mcp-Method`/`Mcp-Name` headers going upstream mirror the new body again. Only headers the
 * client sent are touched; an `Mcp-Name` the new method has no name for is dropped (tool search
 * turns `tools/call find_tool` into a `tools/list`).
 */
export function mirrorHeaders(headers: Record<string, string>, message: JsonRpcMessage): void {
  if (!('method' in message)) return;
  if (headers['mcp-method'] !== undefined && headers['mcp-method'] !== message.method) {
    headers['mcp-method'] = message.method;
  }
  const field = NAME_SOURCE[message.method];
  const expected = field === undefined ? undefined : message.params?.[field];
  const sent = headers['mcp-name'];
  if (sent !== undefined && field === undefined) {
    delete headers['mcp-name'];
    return;
  }
  if (sent === undefined || typeof expected !== 'string' || decodeHeaderValue(sent) === expected) return;
  headers['mcp-name'] = /^[\x20-\x7e]*$/.test(expected)
    ? expected
    : `${BASE64_PREFIX}${Buffer.from(expected, 'utf8').toString('base64')}${BASE64_SUFFIX}`;
}

/**
 * 2026-07-28: `Mcp-Method` must equal the body's method (required on requests) and `Mcp-Name`
 * must equal `params.name` / `params.uri` for tools/call, prompts/get and resources/read.
 * Routing and policy on headers is only safe once they are known to match the body.
 */
export function checkMirroredHeaders(req: IncomingMessage, message: JsonRpcMessage): void {
  if (!('method' in message)) return;
  const id = 'id' in message ? message.id : null;
  const mismatch = (text: string) => reject(400, RPC.headerMismatch, text, { id });
  const method = header(req, 'mcp-method');
  if (method === undefined) {
    if ('id' in message) throw mismatch('Missing Mcp-Method header (required by MCP 2026-07-28)');
  } else if (method !== message.method) {
    throw mismatch(`Mcp-Method header "${method}" does not match the body's method "${message.method}"`);
  }
  const field = NAME_SOURCE[message.method];
  if (field === undefined) return;
  const expected = message.params?.[field];
  const name = header(req, 'mcp-name');
  if (name === undefined) throw mismatch(`Missing Mcp-Name header (required for ${message.method})`);
  if (typeof expected !== 'string' || decodeHeaderValue(name) !== expected) {
    throw mismatch(`Mcp-Name header does not match the body's params.${field}`);
  }
}
