import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  RandomIdGenerator,
} from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { recordMessage, type ExchangeRecord } from '../mcp/exchange.js';
import type { JsonRpcRequest } from '../mcp/jsonrpc.js';
import {
  chooseSpan,
  FastIdGenerator,
  formatTraceparent,
  isSampled,
  parentContext,
  spanIds,
  tracedAs,
  tracePropagation,
} from './trace-context.js';

const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const META_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const header = `00-${CLIENT_TRACE}-b7ad6b7169203331-01`;
const meta = `00-${META_TRACE}-00f067aa0ba902b7-01`;

const ids = new FastIdGenerator();

const call = (params: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'echo', ...params },
});

function recorded(message: JsonRpcRequest): ExchangeRecord {
  const record: ExchangeRecord = {};
  recordMessage(record, message);
  return record;
}

describe('the client trace context', () => {
  it('is taken from params._meta when present, over the traceparent header', () => {
    const record = recorded(call({ _meta: { traceparent: meta, tracestate: 'a=1' } }));
    const parent = trace.getSpanContext(parentContext(record, { traceparent: header }));
    expect(parent?.traceId).toBe(META_TRACE);
    expect(parent?.traceState?.get('a')).toBe('1');
    expect(trace.getSpanContext(parentContext(recorded(call({})), { traceparent: header }))?.traceId).toBe(
      CLIENT_TRACE,
    );
    expect(trace.getSpanContext(parentContext(recorded(call({})), {}))).toBeUndefined();
  });

  it('decides sampling before the span exists, following a sampled parent', () => {
    const ids = new RandomIdGenerator();
    const parentBased = (root: AlwaysOnSampler | AlwaysOffSampler) => new ParentBasedSampler({ root });
    const noParent = parentContext({}, {});
    expect(isSampled(chooseSpan(parentBased(new AlwaysOffSampler()), noParent, ids))).toBe(false);
    expect(isSampled(chooseSpan(parentBased(new AlwaysOnSampler()), noParent, ids))).toBe(true);
    const sampledParent = parentContext({}, { traceparent: header });
    const child = chooseSpan(parentBased(new AlwaysOffSampler()), sampledParent, ids);
    expect(child.traceId).toBe(CLIENT_TRACE);
    expect(child.traceFlags).toBe(TraceFlags.SAMPLED);
  });
});

describe('propagation to the backend', () => {
  it('puts a sampled span in the headers and in a copy of the message, keeping other _meta', () => {
    const message = call({ _meta: { progressToken: 3 } });
    const record = recorded(message);
    const out = tracePropagation(new AlwaysOnSampler(), ids).outgoing(record, {}, message);
    expect(out.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(record.traceparent).toBe(out.headers.traceparent);
    expect(out.message).toEqual(call({ _meta: { progressToken: 3, traceparent: out.headers.traceparent } }));
    expect(message.params?._meta).toEqual({ progressToken: 3 });
  });

  it('changes no body for an unsampled span: the header carries the decision', () => {
    const message = call({});
    const record = recorded(message);
    const out = tracePropagation(new AlwaysOffSampler(), ids).outgoing(
      record,
      { traceparent: header.replace(/01$/, '00') },
      message,
    );
    expect(out.headers.traceparent).toMatch(new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-00$`));
    expect(out.message).toBeUndefined();
  });

  it('leaves responses alone', () => {
    const out = tracePropagation(new AlwaysOnSampler(), ids).outgoing(
      {},
      {},
      { jsonrpc: '2.0', id: 1, result: {} },
    );
    expect(out.message).toBeUndefined();
    expect(out.headers.traceparent).toBeDefined();
  });
});

describe('a traceparent this module wrote', () => {
  it('is read back by position: the same IDs and sampling decision', () => {
    const ids = new RandomIdGenerator();
    for (const sampler of [new AlwaysOnSampler(), new AlwaysOffSampler()]) {
      const chosen = chooseSpan(
        sampler,
        trace.setSpanContext(
          ROOT_CONTEXT,
          trace
            .wrapSpanContext({
              traceId: CLIENT_TRACE,
              spanId: 'b7ad6b7169203331',
              traceFlags: TraceFlags.SAMPLED,
            })
            .spanContext(),
        ),
        ids,
      );
      const written = formatTraceparent(chosen);
      expect(spanIds(written)).toEqual(chosen);
      expect(tracedAs(written)).toBe(isSampled(chosen));
    }
  });
});

describe('the pooled ID generator', () => {
  it('gives W3C-shaped, distinct IDs across pool refills', () => {
    const gen = new FastIdGenerator();
    const seen = new Set<string>();
    // 4096-byte pool: 1000 trace IDs and 1000 span IDs refill it several times.
    for (let i = 0; i < 1000; i++) {
      const traceId = gen.generateTraceId();
      const spanId = gen.generateSpanId();
      expect(traceId).toMatch(/^(?!0+$)[0-9a-f]{32}$/);
      expect(spanId).toMatch(/^(?!0+$)[0-9a-f]{16}$/);
      seen.add(traceId).add(spanId);
    }
    expect(seen.size).toBe(2000);
  });

  it('never gives the all-zero IDs W3C calls invalid', () => {
    const gen = new FastIdGenerator();
    gen.generateSpanId();
    // Reaching into the pool (a test-only view of a private field): the next trace ID's 16 bytes
    // are zero, and so are the 8 bytes the span ID would take after the trace ID drawn instead.
    const { pool } = gen as unknown as { pool: Buffer };
    pool.fill(0, 8, 24).fill(0, 40, 48);
    const traceId = gen.generateTraceId();
    const spanId = gen.generateSpanId();
    expect(traceId).toMatch(/^(?!0+$)[0-9a-f]{32}$/);
    expect(spanId).toMatch(/^(?!0+$)[0-9a-f]{16}$/);
  });
});
