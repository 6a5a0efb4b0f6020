import { describe, expect, it } from 'vitest';
import { PendingRequests, setsEventId } from './pending.js';
import type { JsonRpcRequest } from '../../mcp/jsonrpc.js';

const request = (id: number | string): JsonRpcRequest => ({ jsonrpc: '2.0', id, method: 'tools/list' });

describe('PendingRequests', () => {
  it('matches a response id to its request once, per session, keeping 1 and "1" apart', () => {
    const pending = new PendingRequests();
    pending.add('a', request(1));
    pending.add('a', request('1'));
    pending.add('b', request(1));
    expect(pending.take('a', 1)).toEqual(request(1));
    expect(pending.take('a', 1)).toBeUndefined();
    expect(pending.take('a', '1')).toEqual(request('1'));
    pending.forget('b');
    expect(pending.take('b', 1)).toBeUndefined();
  });

  it('keeps at most 256 requests per session, dropping the oldest', () => {
    const pending = new PendingRequests();
    for (let i = 0; i < 300; i++) pending.add('s', request(i));
    expect(pending.take('s', 0)).toBeUndefined();
    expect(pending.take('s', 43)).toBeUndefined();
    expect(pending.take('s', 44)).toEqual(request(44));
    expect(pending.take('s', 299)).toEqual(request(299));
  });
});

describe('setsEventId', () => {
  it('finds an id line at the start or after any line end, in text and in bytes, and nothing else', () => {
    const cases: Array<[string, boolean]> = [
      ['id: 7\ndata: {}\n\n', true],
      ['event: message\nid:7\ndata: {}\n\n', true],
      ['data: {}\r\rid: 7\r\r', true],
      ['event: message\ndata: {"id:":1}\n\n', false],
      ['data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n', false],
      ['', false],
    ];
    for (const [text, expected] of cases) {
      expect(setsEventId(text)).toBe(expected);
      expect(setsEventId(Buffer.from(text))).toBe(expected);
    }
  });
});
