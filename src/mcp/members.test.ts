import { describe, expect, it } from 'vitest';
import type { ExchangeRecord } from './exchange.js';
import { namedInMessage, recordMember, type MemberKind } from './members.js';

const request = (method: string, params: Record<string, unknown>) =>
  ({ jsonrpc: '2.0', id: 1, method, params }) as const;

describe('members of an aggregate endpoint', () => {
  it('finds what a client message names, by method', () => {
    expect(namedInMessage(request('tools/call', { name: 'now' }))).toEqual({ kind: 'tool', name: 'now' });
    expect(namedInMessage(request('prompts/get', { name: 'p' }))).toEqual({ kind: 'prompt', name: 'p' });
    for (const method of ['resources/read', 'resources/subscribe', 'resources/unsubscribe'])
      expect(namedInMessage(request(method, { uri: 'file:///a' }))).toEqual({
        kind: 'resource',
        name: 'file:///a',
      });
    const complete = (ref: unknown) => namedInMessage(request('completion/complete', { ref }));
    expect(complete({ type: 'ref/prompt', name: 'p' })).toEqual({ kind: 'prompt', name: 'p' });
    expect(complete({ type: 'ref/resource', uri: 'res://{x}' })).toEqual({
      kind: 'resource',
      name: 'res://{x}',
    });
    expect(complete({ type: 'ref/tool', name: 'x' })).toBeUndefined();
    expect(namedInMessage(request('tools/list', {}))).toBeUndefined();
    expect(namedInMessage(request('toString', {}))).toBeUndefined();
    expect(namedInMessage(request('tools/call', { name: 5 }))).toBeUndefined();
  });

  it('records the member from the record, parsing a completion again, and leaves an unknown one out', () => {
    const asked: string[] = [];
    const memberOf = (kind: MemberKind, name: string) => {
      asked.push(`${kind}:${name}`);
      if (name === 'boom') throw new Error('resolver failed');
      return name === 'p' || name === 'now' ? 'time' : undefined;
    };
    const call: ExchangeRecord = { method: 'tools/call', target: 'now' };
    recordMember(call, undefined, memberOf);
    expect(call.backend).toBe('time');
    const completion: ExchangeRecord = { method: 'completion/complete' };
    const body = Buffer.from(
      JSON.stringify(request('completion/complete', { ref: { type: 'ref/prompt', name: 'p' } })),
    );
    recordMember(completion, body, memberOf);
    expect(completion.backend).toBe('time');
    for (const record of [
      { method: 'tools/call', target: 'other' },
      { method: 'tools/call', target: 'boom' },
      { method: 'tools/list' },
      {},
    ] as ExchangeRecord[]) {
      recordMember(record, undefined, memberOf);
      expect(record.backend).toBeUndefined();
    }
    expect(asked).toEqual(['tool:now', 'prompt:p', 'tool:other', 'tool:boom']);
  });
});
