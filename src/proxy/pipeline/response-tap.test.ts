import { describe, expect, it } from 'vitest';
import {
  errorResponses,
  everyResponse,
  type ExchangeObserver,
  type ExchangeRecord,
} from '../../mcp/exchange.js';
import { responseTap } from './response-tap.js';

const observer = (needsResponse?: ExchangeObserver['needsResponse']): ExchangeObserver => ({
  ...(needsResponse ? { needsResponse } : {}),
  onExchange: () => undefined,
  close: () => Promise.resolve(),
});

describe('the response tap', () => {
  it('is absent when no observer needs answers', () => {
    expect(responseTap([])).toBeUndefined();
    expect(responseTap([observer()])).toBeUndefined();
  });

  it('asks for the answers any observer needs, and records them', async () => {
    const ok = '{"jsonrpc":"2.0","id":1,"result":{}}';
    expect(responseTap([observer(errorResponses)])?.needsResponse?.('ping', ok)).toBe(false);
    const tap = responseTap([observer(errorResponses), observer(everyResponse)]);
    expect(tap?.needsResponse?.('ping', ok)).toBe(true);
    const exchange: ExchangeRecord = {};
    const response = { jsonrpc: '2.0' as const, id: 1, error: { code: -32601, message: 'no' } };
    const ctx = {
      identity: { subject: 'local', groups: [], claims: {}, local: true },
      serverName: 'x',
      transport: 'streamable-http' as const,
      clientAddress: '127.0.0.1',
      headers: {},
      exchange,
    };
    await tap?.onServerResponse?.(response, { jsonrpc: '2.0', id: 1, method: 'ping' }, ctx);
    expect(exchange.response).toBe(response);
    expect(exchange.rpcErrorCode).toBe(-32601);
  });
});
