/**
 * W3C trace context around an exchange. The client's context (a `traceparent` header, or
 * `params._meta.traceparent`, which wins as the MCP conventions say) becomes the parent of the
 * exchange's span. The span's IDs and sampling decision are chosen before it is built (before
 * forwarding, when the backend is told its parent), so an unsampled span costs no attributes and
 * the backend's spans join the trace although the span itself is made after the answer ended;
 * PresetIdGenerator then hands the SDK exactly those IDs.
 */
import { randomFillSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import {
  INVALID_SPANID as INVALID_SPAN_ID,
  INVALID_TRACEID as INVALID_TRACE_ID,
  ROOT_CONTEXT,
  SpanKind,
  TraceFlags,
  trace,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';
import { parseTraceParent, TraceState } from '@opentelemetry/core';
import {
  RandomIdGenerator,
  SamplingDecision,
  type IdGenerator,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { ExchangeRecord, TraceContextFields } from '../mcp/exchange.js';
import type { JsonRpcMessage } from '../mcp/jsonrpc.js';

/** The client's trace context: `params._meta`'s, which wins over the headers. */
export function clientContext(record: ExchangeRecord, headers: TraceContextFields): TraceContextFields {
  return record.metaTraceContext ?? headers;
}

/** The client's context, as a parent for the exchange's span. */
export function parentContext(record: ExchangeRecord, headers: TraceContextFields): Context {
  const { traceparent, tracestate } = clientContext(record, headers);
  return remoteParent(traceparent, tracestate);
}

/** A remote parent from W3C `traceparent`/`tracestate` values (the root when there is none). */
export function remoteParent(traceparent: string | undefined, tracestate: string | undefined): Context {
  const parent = traceparent ? parseTraceParent(traceparent) : null;
  if (!parent) return ROOT_CONTEXT;
  const remote: SpanContext = {
    ...parent,
    isRemote: true,
    ...(tracestate ? { traceState: new TraceState(tracestate) } : {}),
  };
  return trace.setSpanContext(ROOT_CONTEXT, remote);
}

export type SpanIds = Pick<SpanContext, 'traceId' | 'spanId' | 'traceFlags'>;

/**
 * The IDs of an exchange's span and whether it is sampled, chosen before the span exists: the
 * same decision the SDK makes when it starts a span with these IDs (the samplers are
 * deterministic), so nothing is built for a span that will not be recorded.
 */
const NO_ATTRIBUTES = Object.freeze({});
const NO_LINKS: [] = [];

export function chooseSpan(sampler: Sampler, parent: Context, ids: IdGenerator): SpanIds {
  const traceId = trace.getSpanContext(parent)?.traceId ?? ids.generateTraceId();
  const sampled =
    sampler.shouldSample(parent, traceId, '', SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS).decision ===
    SamplingDecision.RECORD_AND_SAMPLED;
  return {
    traceId,
    spanId: ids.generateSpanId(),
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
  };
}

export function isSampled(ids: SpanIds): boolean {
  return (ids.traceFlags & TraceFlags.SAMPLED) !== 0;
}

export function formatTraceparent(ctx: Pick<SpanContext, 'traceId' | 'spanId' | 'traceFlags'>): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
}

/** Whether a `traceparent` formatTraceparent wrote is sampled, read from its flags alone. */
export function tracedAs(traceparent: string): boolean {
  return traceparent.endsWith('01');
}

/** The IDs in a `traceparent` formatTraceparent wrote (fixed positions, no validation needed). */
export function spanIds(traceparent: string): SpanIds {
  return {
    traceId: traceparent.slice(3, 35),
    spanId: traceparent.slice(36, 52),
    traceFlags: tracedAs(traceparent) ? TraceFlags.SAMPLED : TraceFlags.NONE,
  };
}

/** Gives the SDK preset IDs for the next span it starts, random ones otherwise. */
export class PresetIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private preset: { traceId: string; spanId: string } | undefined;

  /** Runs `start` (which starts one span, synchronously) with these IDs. */
  withIds<T>(ids: { traceId: string; spanId: string } | undefined, start: () => T): T {
    this.preset = ids;
    try {
      return start();
    } finally {
      this.preset = undefined;
    }
  }

  generateTraceId(): string {
    return this.preset?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.preset?.spanId ?? this.random.generateSpanId();
  }
}

/**
 * Random trace and span IDs from a pool of random bytes filled a few kilobytes at a time: the
 * SDK's generator draws every byte from Math.random, a visible cost per request at high rates.
 */
export class FastIdGenerator implements IdGenerator {
  private readonly pool = Buffer.alloc(4096);
  private offset = this.pool.length;

  generateTraceId(): string {
    return this.next(16);
  }

  generateSpanId(): string {
    return this.next(8);
  }

  private next(bytes: number): string {
    if (this.offset + bytes > this.pool.length) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const id = this.pool.toString('hex', this.offset, (this.offset += bytes));
    // All zeros is not a valid ID (W3C); the chance is negligible but the rule is cheap.
    return id === INVALID_TRACE_ID || id === INVALID_SPAN_ID ? this.next(bytes) : id;
  }
}

/** What a forwarder sends the backend so the server's spans join the client's trace. */
export interface TracePropagation {
  /**
   * Chooses the exchange's span IDs now and records them in `record.traceparent`; returns the
   * `traceparent` (and `tracestate`) headers to send and, when the span is sampled and the
   * message is a request or notification, a copy of it with them in `params._meta` (the
   * 2026-07-28 convention) to send instead. An unsampled span changes no body: the headers carry
   * the decision, and a backend reading only `_meta` records nothing under an unsampled parent.
   */
  outgoing(
    record: ExchangeRecord,
    headers: IncomingHttpHeaders,
    message: JsonRpcMessage | undefined,
  ): { headers: Record<string, string>; message?: JsonRpcMessage };
}

export function tracePropagation(sampler: Sampler, ids: IdGenerator): TracePropagation {
  return {
    outgoing(record, headers, message) {
      const { traceparent: incoming, tracestate } = headers;
      // Most requests carry no context: a new root without building one.
      const parent =
        record.metaTraceContext === undefined && typeof incoming !== 'string'
          ? ROOT_CONTEXT
          : parentContext(record, {
              ...(typeof incoming === 'string' ? { traceparent: incoming } : {}),
              ...(typeof tracestate === 'string' ? { tracestate } : {}),
            });
      const span = chooseSpan(sampler, parent, ids);
      const traceparent = formatTraceparent(span);
      record.traceparent = traceparent;
      const state =
        parent === ROOT_CONTEXT ? undefined : trace.getSpanContext(parent)?.traceState?.serialize();
      const context: Record<string, string> = state ? { traceparent, tracestate: state } : { traceparent };
      const traced = message && isSampled(span) ? withMeta(message, context) : undefined;
      return traced ? { headers: context, message: traced } : { headers: context };
    },
  };
}

/** A copy of a request or notification with the trace context added to `params._meta`. */
function withMeta(message: JsonRpcMessage, context: Record<string, string>): JsonRpcMessage | undefined {
  if (!('method' in message)) return undefined;
  const params = message.params ?? {};
  const meta = params._meta;
  const base = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? meta : {};
  return { ...message, params: { ...params, _meta: { ...base, ...context } } };
}
