import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { sessionEventStore } from './events.js';

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { n },
});

async function replay(store: ReturnType<typeof sessionEventStore>, after: string) {
  const sent: Array<[string, JSONRPCMessage]> = [];
  const streamId = await store.replayEventsAfter(after, {
    send: (id, message) => Promise.resolve(void sent.push([id, message])),
  });
  return { streamId, sent };
}

describe('sessionEventStore', () => {
  it('replays what its stream got after an event, in order, and nothing of other streams', async () => {
    const store = sessionEventStore();
    const first = await store.storeEvent('a', note(1));
    await store.storeEvent('b', note(2));
    const third = await store.storeEvent('a', note(3));
    const fourth = await store.storeEvent('a', note(4));
    expect(await store.getStreamIdForEventId?.(first)).toBe('a');
    const { streamId, sent } = await replay(store, first);
    expect(streamId).toBe('a');
    expect(sent).toEqual([
      [third, note(3)],
      [fourth, note(4)],
    ]);
  });

  it('keeps only the newest events', async () => {
    const store = sessionEventStore(2);
    const first = await store.storeEvent('a', note(1));
    await store.storeEvent('a', note(2));
    await store.storeEvent('a', note(3));
    await store.storeEvent('a', note(4));
    const { sent } = await replay(store, first);
    // Events 1 and 2 were dropped to keep the bound: the replay holds what is left.
    expect(sent.map(([, m]) => m)).toEqual([note(3), note(4)]);
  });

  it('keeps at most its byte bound, so large results do not pile up in a session', async () => {
    const big = (n: number): JSONRPCMessage => ({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { n, data: 'x'.repeat(400) },
    });
    const store = sessionEventStore(1_000, 1_000);
    const first = await store.storeEvent('a', big(1));
    for (let n = 2; n <= 5; n++) await store.storeEvent('a', big(n));
    const { sent } = await replay(store, first);
    // About 450 bytes each: only the newest two fit in 1000.
    expect(sent.map(([, m]) => (m as unknown as { params: { n: number } }).params.n)).toEqual([4, 5]);
  });
});
