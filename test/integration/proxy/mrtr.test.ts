/**
 * Multi round-trip requests through the era bridge: a 2026-07-28 client (the real v2 SDK client
 * pinned to 2026-07-28, or raw HTTP) in front of the conformance fixture, a real v1 SDK server
 * whose tools ask for input with server→client requests. Moat answers with InputRequiredResult
 * rounds and feeds the retries' input responses to the waiting backend requests; every forged,
 * stale, replayed, foreign or misplaced requestState is refused (400, -32602) and audited.
 * Two OIDC users (a real oidc-provider) are the two principals. The fixture runs over HTTP, and
 * over stdio for the last case.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import type { BackendSpec } from '../../../src/proxy/types.js';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { httpFixture, type HttpFixture } from '../../fixtures/conformance/spawn.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { accept, MODERN, sendModern, type MrtrAnswer } from '../../support/mrtr-client.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';
import { testTempDir } from '../../support/temp-dir.js';

let idp: TestOidcProvider;
let fixture: HttpFixture;
const dir = testTempDir('moat-mrtr-');
const tokens: Record<string, string> = {};
let nextId = 1;

beforeAll(async () => {
  [idp, fixture] = await Promise.all([
    startTestOidcProvider([{ id: 'alice' }, { id: 'bob' }]),
    httpFixture(),
  ]);
  tokens.alice = await idp.token('alice');
  tokens.bob = await idp.token('bob');
});
afterAll(async () => {
  await fixture?.stop();
  await idp?.close();
});

async function moat(
  extra: Partial<RunConfigInput> = {},
): Promise<{ proxy: RunningProxy; auditFile: string }> {
  const auditFile = join(dir, `audit-${nextId++}.log`);
  const spec: BackendSpec = { kind: 'http', url: fixture.url, transport: 'streamable-http', remote: false };
  const config = testConfig({
    oidc_config: oidcConfigFor(idp),
    audit_config: { component: 'mrtr', logFile: auditFile },
    ...extra,
  });
  return { proxy: await startProxy(config, spec, { logger: memoryLogger().logger }), auditFile };
}

/** One raw 2026-07-28 request as `user`. */
const send = (
  proxy: RunningProxy,
  user: string,
  method: string,
  params: Record<string, unknown>,
  capabilities?: Record<string, unknown>,
) =>
  sendModern(proxy.endpoint, method, params, {
    token: tokens[user],
    ...(capabilities ? { capabilities } : {}),
  });

const callTool = (
  proxy: RunningProxy,
  user: string,
  params: Record<string, unknown>,
  caps?: Record<string, unknown>,
) => send(proxy, user, 'tools/call', { arguments: {}, ...params }, caps);

/** Round 1 of a tool: its InputRequiredResult (asserted to be one). */
async function firstRound(
  proxy: RunningProxy,
  user: string,
  name: string,
  args: Record<string, unknown> = {},
) {
  const { status, answer } = await callTool(proxy, user, { name, arguments: args });
  expect(status).toBe(200);
  expect(answer.result?.resultType).toBe('input_required');
  return answer.result as Required<Pick<NonNullable<MrtrAnswer['result']>, 'inputRequests' | 'requestState'>>;
}

function flipOneByte(state: string): string {
  const raw = Buffer.from(state.slice(3), 'base64url');
  const at = Math.floor(raw.length / 2);
  raw[at] = (raw[at] as number) ^ 0x01;
  return `m1.${raw.toString('base64url')}`;
}

async function auditEvents(file: string, count: number): Promise<Array<Record<string, unknown>>> {
  // Audit lines are written after the answer; wait (bounded) until the expected ones are there.
  for (let i = 0; i < 100; i++) {
    const text = await readFile(file, 'utf8').catch(() => '');
    const events = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const denied = events.filter((e) => e.outcome === 'denied');
    if (denied.length >= count) return denied;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [];
}

describe('MRTR: 2026-07-28 client, 2025-era HTTP server', () => {
  let proxy: RunningProxy;
  let auditFile: string;
  beforeAll(async () => {
    ({ proxy, auditFile } = await moat());
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('a real v2 client pinned to 2026-07-28 answers one round and gets the result', async () => {
    const client = new ClientV2(
      { name: 'mrtr', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: {} } },
    );
    const asked: unknown[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params);
      const colour = String(request.params.message).includes('color');
      const content: Record<string, string> = colour ? { color: 'blue' } : { name: 'Alice' };
      return { action: 'accept' as const, content };
    });
    await client.connect(
      new TransportV2(new URL(proxy.endpoint), {
        requestInit: { headers: { authorization: `Bearer ${tokens.alice}` } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'Hello, Alice!' }]);
      expect(asked).toEqual([expect.objectContaining({ message: 'What is your name?' })]);
      // Two rounds: the v2 client answers each from its handler and retries.
      const twice = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
      expect(asked).toHaveLength(3);
      expect(twice.content).toEqual([{ type: 'text', text: 'Alice likes blue' }]);
    } finally {
      await client.close();
    }
  });

  it('over raw HTTP: a sealed state per round, each round answered in turn, then the result', async () => {
    const r1 = await firstRound(proxy, 'alice', 'test_input_required_result_multi_round');
    expect(Object.values(r1.inputRequests)).toEqual([
      {
        method: 'elicitation/create',
        params: expect.objectContaining({ message: 'Step 1: What is your name?' }) as unknown,
      },
    ]);
    expect(r1.requestState).toMatch(/^m1\.[A-Za-z0-9_-]+$/);
    const [k1] = Object.keys(r1.inputRequests);
    const second = await callTool(proxy, 'alice', {
      name: 'test_input_required_result_multi_round',
      inputResponses: { [k1 as string]: accept({ name: 'Ada' }) },
      requestState: r1.requestState,
    });
    const r2 = second.answer.result!;
    expect(r2.resultType).toBe('input_required');
    expect(r2.requestState).not.toBe(r1.requestState);
    const [k2] = Object.keys(r2.inputRequests!);
    expect(r2.inputRequests![k2 as string]?.params.message).toBe('Step 2: What is your favorite color?');
    const last = await callTool(proxy, 'alice', {
      name: 'test_input_required_result_multi_round',
      inputResponses: { [k2 as string]: accept({ color: 'teal' }), unknown_extra: accept({}) },
      requestState: r2.requestState,
    });
    expect(last.answer.result?.resultType).toBe('complete');
    expect(last.answer.result?.content).toEqual([{ type: 'text', text: 'Ada likes teal' }]);
  });

  it('gathers what the backend asks at once into one round, and re-asks what a retry left unanswered', async () => {
    const r1 = await firstRound(proxy, 'alice', 'test_input_required_result_multiple_inputs');
    // Keys are the ones the server hinted (`_meta["moat.dev/inputKey"]`); the hint itself stays here.
    expect(Object.keys(r1.inputRequests).sort()).toEqual(['client_roots', 'greeting', 'user_name']);
    expect(JSON.stringify(r1.inputRequests)).not.toContain('moat.dev/inputKey');
    const unhinted = await firstRound(proxy, 'alice', 'test_elicitation', { message: 'Hi?' });
    expect(Object.keys(unhinted.inputRequests)).toEqual(['elicitation-1']);
    const byMethod = Object.fromEntries(Object.entries(r1.inputRequests).map(([k, v]) => [v.method, k]));
    expect(Object.keys(byMethod).sort()).toEqual([
      'elicitation/create',
      'roots/list',
      'sampling/createMessage',
    ]);
    // Only the elicitation is answered: the next round asks the other two again.
    const partial = await callTool(proxy, 'alice', {
      name: 'test_input_required_result_multiple_inputs',
      inputResponses: { [byMethod['elicitation/create'] as string]: accept({ name: 'Bo' }) },
      requestState: r1.requestState,
    });
    const r2 = partial.answer.result!;
    expect(
      Object.values(r2.inputRequests!)
        .map((r) => r.method)
        .sort(),
    ).toEqual(['roots/list', 'sampling/createMessage']);
    const done = await callTool(proxy, 'alice', {
      name: 'test_input_required_result_multiple_inputs',
      inputResponses: {
        [byMethod['sampling/createMessage'] as string]: {
          role: 'assistant',
          content: { type: 'text', text: 'Hi' },
          model: 'm',
        },
        [byMethod['roots/list'] as string]: { roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] },
      },
      requestState: r2.requestState,
    });
    expect(done.answer.result?.content).toEqual([{ type: 'text', text: 'Hi Bo (2 roots)' }]);
  });

  it('uses answers a first request carries up front for the keys the server asks, without a round', async () => {
    const upFront = await callTool(proxy, 'alice', {
      name: 'test_input_required_result_elicitation',
      inputResponses: { user_name: accept({ name: 'Eve' }), other: accept({}) },
    });
    expect(upFront.answer.result?.resultType).toBe('complete');
    expect(upFront.answer.result?.content).toEqual([{ type: 'text', text: 'Hello, Eve!' }]);
  });

  it('carries rounds for prompts/get too', async () => {
    const first = await send(proxy, 'alice', 'prompts/get', { name: 'test_input_required_result_prompt' });
    const r1 = first.answer.result!;
    expect(r1.resultType).toBe('input_required');
    const [key] = Object.keys(r1.inputRequests!);
    const done = await send(proxy, 'alice', 'prompts/get', {
      name: 'test_input_required_result_prompt',
      inputResponses: { [key as string]: accept({ context: 'tests' }) },
      requestState: r1.requestState,
    });
    expect(done.answer.result?.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Use this context: tests' } },
    ]);
  });

  it('never asks for an input kind the request did not declare: the backend gets an error instead', async () => {
    const both = await firstRound(proxy, 'alice', 'test_input_required_result_capabilities');
    expect(
      Object.values(both.inputRequests)
        .map((r) => r.method)
        .sort(),
    ).toEqual(['elicitation/create', 'sampling/createMessage']);
    const samplingOnly = await callTool(
      proxy,
      'alice',
      { name: 'test_input_required_result_capabilities' },
      { sampling: {} },
    );
    expect(Object.values(samplingOnly.answer.result!.inputRequests!).map((r) => r.method)).toEqual([
      'sampling/createMessage',
    ]);
    const [key] = Object.keys(samplingOnly.answer.result!.inputRequests!);
    const done = await callTool(
      proxy,
      'alice',
      {
        name: 'test_input_required_result_capabilities',
        inputResponses: {
          [key as string]: { role: 'assistant', content: { type: 'text', text: 'yo' }, model: 'm' },
        },
        requestState: samplingOnly.answer.result!.requestState,
      },
      { sampling: {} },
    );
    expect(done.answer.result?.content).toEqual([{ type: 'text', text: 'no elicitation, llm=yo' }]);
    // Nothing declared: the server's only question is refused to it, its request cancelled, and
    // the client told what it would have to declare (-32021, as a 2026-07-28 server answers).
    const none = await callTool(proxy, 'alice', { name: 'test_input_required_result_elicitation' }, {});
    expect(none.status).toBe(400);
    expect(none.answer.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
  });

  it('refuses tampered, replayed, foreign and misplaced states, and audits each refusal', async () => {
    const name = 'test_input_required_result_request_state';
    const r1 = await firstRound(proxy, 'alice', name);
    const [key] = Object.keys(r1.inputRequests);
    const retry = (user: string, state: string, extra: Record<string, unknown> = {}) =>
      callTool(proxy, user, {
        name,
        inputResponses: { [key as string]: accept({ ok: true }) },
        requestState: state,
        ...extra,
      });
    const refusals: Array<[string, Awaited<ReturnType<typeof retry>>]> = [
      ['tampered', await retry('alice', flipOneByte(r1.requestState))],
      ['other-principal', await retry('bob', r1.requestState)],
      ['other-request', await retry('alice', r1.requestState, { arguments: { extra: 1 } })],
      ['malformed', await retry('alice', 'not-a-state')],
    ];
    for (const [reason, { status, answer }] of refusals) {
      expect({ reason, status, code: answer.error?.code, data: answer.error?.data }).toEqual({
        reason,
        status: 400,
        code: -32602,
        data: { reason },
      });
    }
    // None of them consumed the state: alice's own retry still works, once.
    const ok = await retry('alice', r1.requestState);
    expect(ok.answer.result?.content).toEqual([{ type: 'text', text: 'state-ok: accept' }]);
    const again = await retry('alice', r1.requestState);
    expect([again.status, again.answer.error?.data?.reason]).toEqual([400, 'replayed']);
    expect(again.answer.error?.message).toMatch(/already used/);

    const denied = await auditEvents(auditFile, 5);
    const byStateCheck = denied.filter(
      (e) =>
        JSON.stringify(e).includes('"denied_by":"request-state"') && JSON.stringify(e).includes('-32602'),
    );
    expect(byStateCheck).toHaveLength(5);
  });
});

describe('MRTR: state lifetime and policies on the retry', () => {
  it('refuses a state whose TTL has passed', async () => {
    const { proxy } = await moat({ request_state_ttl: '1s' });
    try {
      const r1 = await firstRound(proxy, 'alice', 'test_input_required_result_elicitation');
      await new Promise((r) => setTimeout(r, 1200));
      const late = await callTool(proxy, 'alice', {
        name: 'test_input_required_result_elicitation',
        inputResponses: { [Object.keys(r1.inputRequests)[0] as string]: accept({ name: 'Late' }) },
        requestState: r1.requestState,
      });
      expect([late.status, late.answer.error?.code, late.answer.error?.data?.reason]).toEqual([
        400,
        -32602,
        'expired',
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('authorizes the retry again like a new request (here: the rate limit refuses it)', async () => {
    const { proxy } = await moat({ rate_limit: { per_principal: { requests_per_minute: 1, burst: 1 } } });
    try {
      const r1 = await firstRound(proxy, 'alice', 'test_input_required_result_elicitation');
      const retry = await callTool(proxy, 'alice', {
        name: 'test_input_required_result_elicitation',
        inputResponses: { [Object.keys(r1.inputRequests)[0] as string]: accept({ name: 'Zed' }) },
        requestState: r1.requestState,
      });
      expect(retry.status).toBe(429);
      expect(retry.answer.result).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });
});

describe('MRTR: 2026-07-28 client, 2025-era stdio server', () => {
  let moatStdio: MoatUnderTest;
  beforeAll(async () => {
    moatStdio = await moatInFrontOf('stdio');
  });
  afterAll(async () => {
    await moatStdio?.stop();
  });

  it('carries two rounds to the stdio server and back', async () => {
    const endpoint = moatStdio.proxy.endpoint;
    const call = (params: Record<string, unknown>) =>
      sendModern(endpoint, 'tools/call', {
        name: 'test_input_required_result_multi_round',
        arguments: {},
        ...params,
      });
    const r1 = (await call({})).answer.result!;
    expect(r1.resultType).toBe('input_required');
    const r2 = (
      await call({ inputResponses: { step1: accept({ name: 'Flo' }) }, requestState: r1.requestState })
    ).answer.result!;
    expect(Object.keys(r2.inputRequests!)).toEqual(['step2']);
    const done = await call({
      inputResponses: { step2: accept({ color: 'green' }) },
      requestState: r2.requestState,
    });
    expect(done.answer.result?.content).toEqual([{ type: 'text', text: 'Flo likes green' }]);
    const replay = await call({
      inputResponses: { step2: accept({ color: 'x' }) },
      requestState: r2.requestState,
    });
    expect([replay.status, replay.answer.error?.data?.reason]).toEqual([400, 'replayed']);
  });
});
