/**
 * W3C trace context around an exchange. The client's context (a `traceparent` header, or
 * `params._meta.traceparent`, which wins as the MCP conventions say) becomes the parent of the
 * exchange's span. When the backend speaks HTTP, the span's IDs are chosen before forwarding, so
 * the backend is told its parent (header and `params._meta`) although the span itself is made
 * after the answer ended; PresetIdGenerator then hands the SDK exactly those IDs.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
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
import type { ExchangeRecord } from '../mcp/exchange.js';

/** The client's context, as a parent for the exchange's span. */
export function parentContext(
  headers: { traceparent?: string | undefined; tracestate?: string | undefined },
  body: Buffer | undefined,
): Context {
  const meta = body !== undefined && body.includes('traceparent') ? metaTraceContext(body) : undefined;
  const traceparent = meta?.traceparent ?? headers.traceparent;
  const tracestate = meta ? meta.tracestate : headers.tracestate;
  const parent = traceparent ? parseTraceParent(traceparent) : null;
  if (!parent) return ROOT_CONTEXT;
  const remote: SpanContext = {
    ...parent,
    isRemote: true,
    ...(tracestate ? { traceState: new TraceState(tracestate) } : {}),
  };
  return trace.setSpanContext(ROOT_CONTEXT, remote);
}

function metaTraceContext(body: Buffer): { traceparent: string; tracestate?: string } | undefined {
  try {
    const meta = (JSON.parse(body.toString('utf8')) as { params?: { _meta?: Record<string, unknown> } })
      .params?._meta;
    if (typeof meta?.traceparent !== 'string') return undefined;
    return {
      traceparent: meta.traceparent,
      ...(typeof meta.tracestate === 'string' ? { tracestate: meta.tracestate } : {}),
    };
  } catch {
    return undefined;
  }
}

export function formatTraceparent(ctx: Pick<SpanContext, 'traceId' | 'spanId' | 'traceFlags'>): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
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

/** What the HTTP forwarder sends the backend so the server's spans join the client's trace. */
export interface TracePropagation {
  /**
   * Chooses the exchange's span IDs now and records them; returns the `traceparent` (and
   * `tracestate`) headers to send and the body with them in `params._meta` (unchanged when it is
   * not a JSON-RPC request or notification with object params, or absent).
   */
  outgoing(
    record: ExchangeRecord,
    headers: IncomingHttpHeaders,
    body: Buffer | undefined,
  ): { headers: Record<string, string>; body: Buffer | undefined };
}

export function tracePropagation(sampler: Sampler): TracePropagation {
  const ids = new RandomIdGenerator();
  return {
    outgoing(record, headers, body) {
      const parentCtx = parentContext(
        {
          traceparent: typeof headers.traceparent === 'string' ? headers.traceparent : undefined,
          tracestate: typeof headers.tracestate === 'string' ? headers.tracestate : undefined,
        },
        body,
      );
      const parent = trace.getSpanContext(parentCtx);
      const traceId = parent?.traceId ?? ids.generateTraceId();
      // The same decision the SDK makes when it starts the span (the samplers are deterministic).
      const sampled =
        sampler.shouldSample(parentCtx, traceId, '', SpanKind.SERVER, {}, []).decision ===
        SamplingDecision.RECORD_AND_SAMPLED;
      const traceparent = formatTraceparent({
        traceId,
        spanId: ids.generateSpanId(),
        traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      });
      record.traceparent = traceparent;
      const tracestate = parent?.traceState?.serialize();
      const out: Record<string, string> = { traceparent, ...(tracestate ? { tracestate } : {}) };
      return { headers: out, body: body && withMeta(body, out) };
    },
  };
}

/** The message with the trace context in `params._meta` (the 2026-07-28 convention). */
function withMeta(body: Buffer, context: Record<string, string>): Buffer {
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return body;
  const m = message as { method?: unknown; params?: unknown };
  if (typeof m.method !== 'string') return body;
  const params = m.params === undefined ? {} : m.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return body;
  const p = params as { _meta?: unknown };
  const meta = typeof p._meta === 'object' && p._meta !== null ? p._meta : {};
  m.params = { ...p, _meta: { ...meta, ...context } };
  return Buffer.from(JSON.stringify(m));
}
