import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../../mcp/jsonrpc.js';
import { askClient, InputRoundError, PendingClientAnswers, retryRequest } from './input-rounds.js';

const facts = (capabilities: Record<string, unknown>) => ({
  clientInfo: { name: 'c', version: '1' },
  capabilities,
});

describe('input rounds for a 2025-era client', () => {
  it('asks every input request and keys the answers for the retry', async () => {
    const asked: string[] = [];
    const responses = await askClient(
      {
        a: { method: 'elicitation/create', params: { message: 'q' } },
        b: { method: 'roots/list' },
      },
      facts({ elicitation: {}, roots: {} }),
      (method) => {
        asked.push(method);
        return Promise.resolve({ jsonrpc: '2.0', id: 1, result: { method } });
      },
    );
    expect(asked.sort()).toEqual(['elicitation/create', 'roots/list']);
    expect(responses).toEqual({ a: { method: 'elicitation/create' }, b: { method: 'roots/list' } });
  });

  it('never asks for a kind the client did not declare, or an unknown kind', async () => {
    let asked = 0;
    const ask = () => {
      asked++;
      return Promise.resolve({ jsonrpc: '2.0' as const, id: 1, result: {} });
    };
    await expect(
      askClient({ s: { method: 'sampling/createMessage' } }, facts({ elicitation: {} }), ask),
    ).rejects.toMatchObject({
      code: -32021,
      message: expect.stringContaining('capability "sampling"'),
    });
    await expect(askClient({ x: { method: 'tools/call' } }, facts({}), ask)).rejects.toBeInstanceOf(
      InputRoundError,
    );
    expect(asked).toBe(0);
  });

  it('hands an answer only to the session that was asked', async () => {
    const pending = new PendingClientAnswers();
    let sent: (request: JsonRpcRequest) => void = () => {};
    const asked = new Promise<JsonRpcRequest>((resolve) => (sent = resolve));
    const waiting = pending.ask(
      's1',
      'roots/list',
      undefined,
      (r) => (sent(r), true),
      new AbortController().signal,
    );
    const { id } = await asked;
    expect(pending.answer('s2', { jsonrpc: '2.0', id, result: {} })).toBe(false);
    // Without a relay (no Redis), an answer nothing here waits for is not delivered anywhere.
    expect(await pending.deliver('s2', { jsonrpc: '2.0', id, result: {} }, 1000)).toBe(false);
    expect(await pending.deliver('s1', { jsonrpc: '2.0', id, result: { roots: [] } }, 1000)).toBe(true);
    await expect(waiting).resolves.toMatchObject({ result: { roots: [] } });
  });

  it('stops waiting when the round is aborted', async () => {
    const pending = new PendingClientAnswers();
    const controller = new AbortController();
    const waiting = pending.ask('s1', 'roots/list', undefined, () => true, controller.signal);
    controller.abort(new Error('time is up'));
    await expect(waiting).rejects.toThrow('time is up');
  });

  it('builds the retry: the answers, the round’s state, the earlier round’s fields replaced', () => {
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 't', inputResponses: { old: {} }, requestState: 'old' },
    };
    expect(retryRequest(request, { requestState: 's2' }, { a: { x: 1 } }).params).toEqual({
      name: 't',
      inputResponses: { a: { x: 1 } },
      requestState: 's2',
    });
    expect(retryRequest(request, {}, {}).params).toEqual({ name: 't', inputResponses: {} });
  });
});
