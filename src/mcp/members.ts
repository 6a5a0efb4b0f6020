/**
 * Members of an aggregate endpoint: when one backend serves several workloads as one MCP server
 * (`moat group serve`), the names it exposes (tools, prompts, resource URIs) each belong to one
 * member workload. The backend says which through a resolver; policies (Cedar's `context.backend`)
 * and observers (audit's `target.backend`, the span attribute `moat.backend`) read the answer.
 */
import type { ExchangeRecord } from './exchange.js';
import { tryParseJsonRpc, type JsonRpcMessage } from './jsonrpc.js';
import { isObject } from '../util/is-object.js';

/** What an exposed name names: a tool or prompt name, or a resource URI. */
export type MemberKind = 'tool' | 'prompt' | 'resource';

/**
 * The member workload an exposed name belongs to, or undefined when the name is unknown (e.g. not
 * listed yet, or the member left the group). Synchronous and cheap: it runs once per client message
 * that names something, and once per item of a list answer an authorization policy filters.
 */
export type MemberResolver = (kind: MemberKind, name: string) => string | undefined;

/** The methods that name a tool, prompt or resource, and where in `params`. */
const NAMED: Record<string, { kind: MemberKind; key: 'name' | 'uri' }> = {
  'tools/call': { kind: 'tool', key: 'name' },
  'prompts/get': { kind: 'prompt', key: 'name' },
  'resources/read': { kind: 'resource', key: 'uri' },
  'resources/subscribe': { kind: 'resource', key: 'uri' },
  'resources/unsubscribe': { kind: 'resource', key: 'uri' },
};

/** The kind and name a client message targets, when it names one (completion/complete: its `ref`). */
export function namedInMessage(message: JsonRpcMessage): { kind: MemberKind; name: string } | undefined {
  if (!('method' in message) || message.params === undefined) return undefined;
  const { method, params } = message;
  if (method === 'completion/complete') {
    const ref = params.ref;
    if (!isObject(ref)) return undefined;
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') return { kind: 'prompt', name: ref.name };
    if (ref.type === 'ref/resource' && typeof ref.uri === 'string')
      return { kind: 'resource', name: ref.uri };
    return undefined;
  }
  const named = Object.hasOwn(NAMED, method) ? NAMED[method] : undefined;
  if (named === undefined) return undefined;
  const name = params[named.key];
  return typeof name === 'string' ? { kind: named.kind, name } : undefined;
}

/**
 * Records in `record.backend` the member an exchange's message went to, from what the record
 * already says (method and target); only a completion/complete, whose `ref` the record does not
 * hold, has its `body` parsed again. A resolver that throws leaves the member unknown.
 */
export function recordMember(
  record: ExchangeRecord,
  body: Buffer | undefined,
  memberOf: MemberResolver,
): void {
  const { method, target } = record;
  if (method === undefined) return;
  let named: { kind: MemberKind; name: string } | undefined;
  if (target !== undefined) {
    const kind = Object.hasOwn(NAMED, method) ? NAMED[method]?.kind : undefined;
    if (kind !== undefined) named = { kind, name: target };
  } else if (method === 'completion/complete' && body !== undefined) {
    const message = tryParseJsonRpc(body.toString('utf8'));
    if (message !== undefined) named = namedInMessage(message);
  }
  if (named === undefined) return;
  const member = resolveMember(memberOf, named.kind, named.name);
  if (member !== undefined) record.backend = member;
}

/** The resolver's answer; one that throws is taken as "unknown" (a policy reading it then fails closed). */
export function resolveMember(memberOf: MemberResolver, kind: MemberKind, name: string): string | undefined {
  try {
    const member = memberOf(kind, name);
    return typeof member === 'string' ? member : undefined;
  } catch {
    return undefined;
  }
}
