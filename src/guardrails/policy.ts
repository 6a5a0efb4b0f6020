/**
 * Guardrails as a message policy: secrets and personal data looked for in what the client sends
 * the server (tool call and prompt arguments, completion values, its answers to the server's
 * sampling and elicitation requests) and in what the server answers (tool results, prompt
 * messages, resource contents, completions) or sends of its own accord (its sampling and
 * elicitation requests, log and progress notifications). Each finding is blocked, redacted or only recorded,
 * as the config says for its detector and direction. Every string of the payload is scanned once
 * by the direction's combined matcher; an object key that names a secret (`password`, `api_key`)
 * makes its random-looking string value a `generic-secret` too.
 */
import type { Logger } from 'pino';
import type { GuardrailFinding } from '../mcp/exchange.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../mcp/jsonrpc.js';
import {
  ALLOW,
  type ClientVerdict,
  type MessagePolicy,
  type ServerMessageVerdict,
  type ServerOriginated,
} from '../mcp/policy.js';
import { log } from '../util/log.js';
import type { Action, Direction, GuardrailSettings } from './config.js';
import { DETECTORS, randomLookingValue } from './detectors.js';
import { createMatcher, placeholder, redactText, type Matcher } from './matcher.js';

export const GUARDRAILS_POLICY = 'guardrails';
/** The JSON-RPC error code of a blocked request or answer. */
export const GUARDRAIL_BLOCKED_CODE = -32050;

/** Requests whose params the client may fill with content (not names or URIs alone). */
const SCREENED_REQUESTS = new Set(['tools/call', 'prompts/get', 'completion/complete']);
/** Requests whose answers carry content from the server. */
const SCREENED_ANSWERS = new Set(['tools/call', 'prompts/get', 'resources/read', 'completion/complete']);

/** Protocol bookkeeping in a server message's params, never content (and rewritten in transit). */
const BOOKKEEPING = new Set(['_meta', 'progressToken', 'requestId']);

/** An object key naming a secret: its string value is judged by the keyword rule. */
const SECRET_NAME = /passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|credential/i;
const GENERIC = 'generic-secret';

type Acting = Exclude<Action, 'off'>;

interface Side {
  direction: Direction;
  matcher: Matcher;
  actions: ReadonlyMap<string, Acting>;
  keyRule: boolean;
}

/** What one scan found and the payload with its redactions. */
interface Screened {
  value: unknown;
  findings: GuardrailFinding[];
  blocked: string[];
}

export function createGuardrailPolicy(settings: GuardrailSettings, logger: Logger = log()): MessagePolicy {
  const side = (direction: Direction): Side | undefined => {
    const actions = settings[direction];
    if (actions.size === 0) return undefined;
    return {
      direction,
      matcher: createMatcher(DETECTORS.filter((d) => actions.has(d.id))),
      actions,
      keyRule: actions.has(GENERIC),
    };
  };
  const toServer = side('to_server');
  const toClient = side('to_client');

  function report(
    screened: Screened,
    where: string,
    ctx: { exchange?: { guardrailFindings?: GuardrailFinding[] } } | undefined,
  ) {
    if (screened.findings.length === 0) return;
    if (ctx?.exchange) (ctx.exchange.guardrailFindings ??= []).push(...screened.findings);
    logger.warn(
      { guardrails: screened.findings.map(({ detector, action, path }) => ({ detector, action, path })) },
      `guardrails found ${describe(screened.findings)} in ${where}`,
    );
  }

  return {
    name: GUARDRAILS_POLICY,

    onClientMessage(message, ctx): ClientVerdict {
      if (!toServer) return ALLOW;
      const target = clientPayload(message);
      if (!target) return ALLOW;
      const screened = screen(target.value, toServer, target.path);
      report(screened, target.path, ctx);
      if (screened.blocked.length > 0) {
        return {
          action: 'deny',
          reason: 'forbidden',
          error: blockedError(screened.blocked, 'request'),
        };
      }
      if (screened.value === target.value) return ALLOW;
      return { action: 'rewrite', message: target.replace(screened.value) };
    },

    needsResponse: toClient ? (method) => SCREENED_ANSWERS.has(method) : () => false,

    onServerResponse(response, request, ctx): JsonRpcResponse {
      if (!toClient || !SCREENED_ANSWERS.has(request.method) || response.result === undefined)
        return response;
      const screened = screen(response.result, toClient, `${request.method} result`);
      report(screened, `the ${request.method} result`, ctx);
      if (screened.blocked.length > 0) {
        return { jsonrpc: '2.0', id: response.id, error: blockedError(screened.blocked, 'answer') };
      }
      return screened.value === response.result ? response : { ...response, result: screened.value };
    },

    // Only with a `to_client` side: otherwise no transport parses server messages for it.
    ...(toClient && {
      onServerMessage(message, ctx): ServerMessageVerdict {
        const target = serverPayload(message);
        if (!target) return ALLOW;
        const screened = screen(target.value, toClient, target.path);
        report(screened, `the server's ${message.method}`, ctx);
        if (screened.blocked.length > 0)
          return { action: 'deny', error: blockedError(screened.blocked, 'request') };
        if (screened.value === target.value) return ALLOW;
        return { action: 'rewrite', message: target.replace(screened.value) };
      },
    }),
  };
}

/** The content of a server request or notification (its params but the bookkeeping), and how to put it back. */
function serverPayload(
  message: ServerOriginated,
):
  | { value: Record<string, unknown>; path: string; replace: (value: unknown) => ServerOriginated }
  | undefined {
  const params = message.params;
  if (params === undefined) return undefined;
  const kept: Record<string, unknown> = {};
  const content: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) (BOOKKEEPING.has(key) ? kept : content)[key] = value;
  return {
    value: content,
    path: `${message.method} params`,
    replace: (value) => ({ ...message, params: { ...(value as Record<string, unknown>), ...kept } }),
  };
}

/** The part of a client message guardrails read, and how to put a redacted one back. */
function clientPayload(
  message: JsonRpcMessage,
): { value: unknown; path: string; replace: (value: unknown) => JsonRpcMessage } | undefined {
  if ('method' in message) {
    if (!SCREENED_REQUESTS.has(message.method) || message.params === undefined) return undefined;
    // `_meta` carries protocol bookkeeping (progress tokens, trace context), not content.
    const { _meta, ...content } = message.params;
    return {
      value: content,
      path: `${message.method} params`,
      replace: (value) => ({
        ...message,
        params: { ...(value as Record<string, unknown>), ...(_meta === undefined ? {} : { _meta }) },
      }),
    };
  }
  // The client's answer to a server request: a sampling message, elicited input, roots.
  if (message.result === undefined) return undefined;
  return {
    value: message.result,
    path: 'answer to a server request',
    replace: (value) => ({ ...message, result: value as Record<string, unknown> }),
  };
}

function screen(value: unknown, side: Side, path: string): Screened {
  const screened: Screened = { value, findings: [], blocked: [] };
  screened.value = walk(value, side, path, screened, false);
  return screened;
}

/** The value with its redactions (the same object when nothing changed). */
function walk(value: unknown, side: Side, path: string, out: Screened, secretName: boolean): unknown {
  if (typeof value === 'string') return screenString(value, side, path, out, secretName);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = walk(item, side, `${path}[${i}]`, out, false);
      if (next !== item) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  if (typeof value === 'object' && value !== null) {
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const next = walk(item, side, `${path}.${key}`, out, side.keyRule && SECRET_NAME.test(key));
      if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
    }
    return copy ?? value;
  }
  return value;
}

function screenString(text: string, side: Side, path: string, out: Screened, secretName: boolean): string {
  const hits = side.matcher.scan(text);
  if (hits.length === 0) {
    // `{"password": "…"}`: the key is the keyword, the whole value the candidate.
    if (!secretName || !randomLookingValue(text)) return text;
    note(GENERIC, side, path, out);
    return side.actions.get(GENERIC) === 'redact' ? placeholder(GENERIC) : text;
  }
  let redact = false;
  for (const hit of hits) {
    note(hit.detector, side, path, out);
    if (side.actions.get(hit.detector) === 'redact') redact = true;
  }
  return redact ? redactText(text, hits, (detector) => side.actions.get(detector) === 'redact') : text;
}

function note(detector: string, side: Side, path: string, out: Screened): void {
  const action = side.actions.get(detector) as Acting;
  if (action === 'block' && !out.blocked.includes(detector)) out.blocked.push(detector);
  if (!out.findings.some((f) => f.detector === detector && f.path === path)) {
    out.findings.push({ detector, direction: side.direction, action, path });
  }
}

function describe(findings: readonly GuardrailFinding[]): string {
  return [...new Set(findings.map((f) => `${f.detector} (${f.action})`))].join(', ');
}

/** Names the detectors, never what they found. */
function blockedError(detectors: readonly string[], what: 'request' | 'answer') {
  return {
    code: GUARDRAIL_BLOCKED_CODE,
    message: `Blocked by the proxy's guardrails: the ${what} contains ${detectors.join(', ')}`,
    data: { guardrails: detectors },
  };
}
