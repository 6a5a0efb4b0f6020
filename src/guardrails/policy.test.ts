import { describe, expect, it } from 'vitest';
import type { ExchangeRecord } from '../mcp/exchange.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../mcp/jsonrpc.js';
import type { ClientVerdict, MessageContext } from '../mcp/policy.js';
import { localContext } from '../../test/support/message-context.js';
import { memoryLogger } from '../../test/support/proxy-harness.js';
import { parseGuardrailConfig } from './config.js';
import { createGuardrailPolicy, GUARDRAIL_BLOCKED_CODE } from './policy.js';

const STRIPE = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
const CARD = '4111 1111 1111 1111';

function policyFor(config: unknown) {
  const { logger, lines } = memoryLogger();
  return { policy: createGuardrailPolicy(parseGuardrailConfig(config, 'test'), logger), lines };
}

function context(): MessageContext & { exchange: ExchangeRecord } {
  return { ...localContext, exchange: {} };
}

function fromClient(config: unknown, message: JsonRpcMessage) {
  const { policy, lines } = policyFor(config);
  const ctx = context();
  const verdict = policy.onClientMessage?.(message, ctx) as ClientVerdict;
  return { verdict, ctx, lines };
}

async function fromServer(config: unknown, request: JsonRpcRequest, result: Record<string, unknown>) {
  const { policy } = policyFor(config);
  const ctx = context();
  const response: JsonRpcResponse = { jsonrpc: '2.0', id: request.id, result };
  const out = await policy.onServerResponse?.(response, request, ctx);
  return { out: out as JsonRpcResponse, ctx, needed: policy.needsResponse?.(request.method, '') };
}

const call = (args: Record<string, unknown>, meta?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'pay', arguments: args, ...(meta ? { _meta: meta } : {}) },
});

describe('client messages', () => {
  it('refuses a tool call carrying a secret, naming the detector and never the value', () => {
    const { verdict, ctx, lines } = fromClient({}, call({ note: `use ${STRIPE}` }));
    expect(verdict).toMatchObject({
      action: 'deny',
      reason: 'forbidden',
      error: { code: GUARDRAIL_BLOCKED_CODE },
    });
    const text = JSON.stringify(verdict) + lines.join('') + JSON.stringify(ctx.exchange);
    expect(text).toContain('stripe-key');
    expect(text).not.toContain(STRIPE);
    expect(ctx.exchange.guardrailFindings).toEqual([
      {
        detector: 'stripe-key',
        direction: 'to_server',
        action: 'block',
        path: 'tools/call params.arguments.note',
      },
    ]);
  });

  it('redacts in place and leaves _meta and clean calls alone', () => {
    const meta = { progressToken: 'sk_live_notscreened_000000000000' };
    const { verdict } = fromClient({ to_server: 'redact' }, call({ card: CARD, n: 3 }, meta));
    expect(verdict).toEqual({
      action: 'rewrite',
      message: call({ card: '[REDACTED:payment-card]', n: 3 }, meta),
    });
    expect(fromClient({}, call({ text: 'hello' })).verdict).toEqual({ action: 'allow' });
  });

  it('judges a value by the key that names it (`password`, `api_key`)', () => {
    const { verdict } = fromClient({ to_server: 'redact' }, call({ db: { password: 'Zx8kLq2mN9pR4tVw' } }));
    expect(verdict).toEqual({
      action: 'rewrite',
      message: call({ db: { password: '[REDACTED:generic-secret]' } }),
    });
    expect(fromClient({}, call({ password: 'correct horse' })).verdict).toEqual({ action: 'allow' });
  });

  it("screens the client's answer to an elicitation or sampling request", () => {
    const answer: JsonRpcMessage = {
      jsonrpc: '2.0',
      id: 'srv-1',
      result: { action: 'accept', content: { email: 'ana@example.org' } },
    };
    const { verdict, ctx } = fromClient({ detectors: { email: 'redact' } }, answer);
    expect(verdict).toEqual({
      action: 'rewrite',
      message: { ...answer, result: { action: 'accept', content: { email: '[REDACTED:email]' } } },
    });
    expect(ctx.exchange.guardrailFindings?.[0]?.path).toBe('answer to a server request.content.email');
  });

  it('follows per-detector and per-direction actions, and off', () => {
    const config = { detectors: { 'payment-card': 'off', 'stripe-key': { to_server: 'warn' } } };
    expect(fromClient(config, call({ card: CARD })).verdict).toEqual({ action: 'allow' });
    const warned = fromClient(config, call({ key: STRIPE }));
    expect(warned.verdict).toEqual({ action: 'allow' });
    expect(warned.ctx.exchange.guardrailFindings?.[0]?.action).toBe('warn');
  });

  it('leaves methods without content alone (initialize, lists)', () => {
    const list: JsonRpcMessage = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: STRIPE } };
    expect(fromClient({}, list).verdict).toEqual({ action: 'allow' });
  });
});

describe('server answers', () => {
  const read: JsonRpcRequest = {
    jsonrpc: '2.0',
    id: 3,
    method: 'resources/read',
    params: { uri: 'file:///a' },
  };

  it('redacts personal data in resource contents', async () => {
    const { out, needed } = await fromServer({}, read, {
      contents: [{ uri: 'file:///a', text: `card ${CARD}, SSN 219-09-9999, NINO AB123456C` }],
    });
    expect(needed).toBe(true);
    expect(out.result).toEqual({
      contents: [
        {
          uri: 'file:///a',
          text: 'card [REDACTED:payment-card], SSN [REDACTED:us-ssn], NINO [REDACTED:uk-nino]',
        },
      ],
    });
  });

  it('replaces a blocked answer with an error naming the detector', async () => {
    const { out } = await fromServer({ to_client: 'block' }, read, {
      contents: [{ uri: 'x', text: STRIPE }],
    });
    expect(out).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: GUARDRAIL_BLOCKED_CODE,
        message: "Blocked by the proxy's guardrails: the answer contains stripe-key",
        data: { guardrails: ['stripe-key'] },
      },
    });
  });

  it('does not ask for answers without content (lists), nor any when the direction is off', () => {
    const { policy } = policyFor({});
    expect(policy.needsResponse?.('tools/list', '')).toBe(false);
    expect(policyFor({ to_client: 'off' }).policy.needsResponse?.('tools/call', '')).toBe(false);
  });
});

describe('config', () => {
  it('names the field and what is allowed', () => {
    expect(() =>
      parseGuardrailConfig({ detectors: { 'aws-key': 'block' } }, '--guardrail-config g.yaml'),
    ).toThrow(
      /--guardrail-config g.yaml: field detectors.aws-key: unknown detector; known: private-key, aws-access-key/,
    );
    expect(() => parseGuardrailConfig({ to_server: 'drop' }, 'x')).toThrow(/field to_server: .*"block"/);
  });
});

describe("the server's own messages", () => {
  const progress = {
    jsonrpc: '2.0' as const,
    method: 'notifications/progress',
    params: { progressToken: STRIPE, progress: 1, message: `charging ${CARD}`, _meta: { note: STRIPE } },
  };

  it('redacts content and leaves the bookkeeping (progress token, _meta) as it came', () => {
    const { policy } = policyFor({ to_client: 'redact' });
    const ctx = context();
    expect(policy.onServerMessage?.(progress, ctx)).toEqual({
      action: 'rewrite',
      message: { ...progress, params: { ...progress.params, message: 'charging [REDACTED:payment-card]' } },
    });
    expect(ctx.exchange.guardrailFindings).toEqual([
      {
        detector: 'payment-card',
        direction: 'to_client',
        action: 'redact',
        path: 'notifications/progress params.message',
      },
    ]);
  });

  it('refuses a request carrying a secret, naming the detector only; works without an exchange', () => {
    const { policy, lines } = policyFor({ to_client: 'block' });
    const request = {
      jsonrpc: '2.0' as const,
      id: 3,
      method: 'elicitation/create',
      params: { message: `confirm ${STRIPE}`, requestedSchema: { type: 'object' } },
    };
    const verdict = policy.onServerMessage?.(request, undefined);
    expect(verdict).toMatchObject({
      action: 'deny',
      error: { code: GUARDRAIL_BLOCKED_CODE, data: { guardrails: ['stripe-key'] } },
    });
    expect(JSON.stringify(verdict) + lines.join('')).not.toContain(STRIPE);
  });

  it('has no hook without a to_client side, so no transport parses server messages for it', () => {
    const { policy } = policyFor({ to_client: 'off' });
    expect('onServerMessage' in policy).toBe(false);
  });
});
