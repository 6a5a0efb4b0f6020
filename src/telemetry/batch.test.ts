import { describe, expect, it } from 'vitest';
import type { ExchangeFacts } from './attributes.js';
import { BatchBuilder } from './batch.js';

const facts = (over: Partial<ExchangeFacts>): ExchangeFacts => ({
  httpMethod: 'POST',
  path: '/mcp',
  status: 200,
  started: 1000,
  ended: 1250,
  clientAddress: '127.0.0.1',
  transport: 'streamable-http',
  responseBytes: 10,
  method: 'tools/call',
  target: 'echo',
  ...over,
});

describe('BatchBuilder', () => {
  it('groups durations by metric series, keeps sampled exchanges whole and only counter changes', () => {
    const batch = new BatchBuilder(true);
    const span = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` };
    batch.add(facts({}), span);
    batch.add(facts({ ended: 1500 }), undefined);
    batch.add(facts({ target: 'other', error: 'tool_error' }), undefined);
    batch.add(facts({ method: 'initialize', target: undefined, sessionId: 's' }), undefined);
    batch.add(facts({ status: 403, deniedBy: 'authz', error: '403' }), undefined);
    expect(batch.size).toBe(5);
    const taken = batch.take();
    expect(taken.spans).toEqual([{ facts: facts({}), span }]);
    const echo = taken.durations.find(
      ([, attributes]) => attributes['gen_ai.tool.name'] === 'echo' && !attributes['error.type'],
    );
    expect(echo?.[2]).toEqual([0.25, 0.5]);
    expect(taken.durations.find(([, a]) => a['error.type'] === 'tool_error')?.[2]).toEqual([0.25]);
    expect(taken.durations).toHaveLength(4);
    expect(taken.counted.map((f) => f.method ?? f.deniedBy)).toEqual(['initialize', 'tools/call']);
    expect(taken.counted[1]?.deniedBy).toBe('authz');
    expect(batch.size).toBe(0);
    expect(batch.take()).toEqual({ spans: [], durations: [], counted: [] });
  });

  it('puts each duration in its own series when series alternate and repeat', () => {
    const batch = new BatchBuilder(true);
    const targets = ['echo', 'echo', 'other', 'echo', 'other', 'other', 'echo'];
    targets.forEach((target, i) => batch.add(facts({ target, ended: 1000 + i }), undefined));
    batch.add(facts({ target: 'echo', httpVersion: '2.0', ended: 1100 }), undefined);
    const taken = batch.take();
    const series = (target: string, version?: string) =>
      taken.durations.find(
        ([, a]) => a['gen_ai.tool.name'] === target && a['network.protocol.version'] === version,
      )?.[2];
    expect(series('echo')).toEqual([0, 0.001, 0.003, 0.006]);
    expect(series('other')).toEqual([0.002, 0.004, 0.005]);
    expect(series('echo', '2.0')).toEqual([0.1]);
    expect(taken.durations).toHaveLength(3);
  });

  it('sends only spans when metrics are off', () => {
    const batch = new BatchBuilder(false);
    batch.add(facts({ status: 500 }), undefined);
    expect(batch.take()).toEqual({ spans: [], durations: [], counted: [] });
  });
});
