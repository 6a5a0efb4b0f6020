/**
 * What the proxy's thread sends the telemetry worker, built per batch so that the message stays
 * small: sampled exchanges whole (for their spans), the operation durations grouped by metric
 * series (a number per exchange), and only the rare exchanges that change a counter. Structured
 * cloning of one object per request cost more than the SDK work it moved off the thread.
 */
import {
  changesCounters,
  metricAttributes,
  metricKey,
  type Attributes,
  type ExchangeFacts,
} from './attributes.js';

/** Where a sampled exchange's span sits: its own `traceparent` and the client's context. */
export interface SpanPlacement {
  /** As formatTraceparent wrote it (sampled). */
  traceparent: string;
  clientTraceparent?: string;
  clientTracestate?: string;
}

/** A sampled exchange: its facts and where its span goes. */
export interface SpanEntry {
  facts: ExchangeFacts;
  span: SpanPlacement;
}

export interface ExchangeBatch {
  spans: SpanEntry[];
  /** Operation durations in seconds, by metric series: key, its attributes, the values. */
  durations: Array<[key: string, attributes: Attributes, seconds: number[]]>;
  /** Exchanges that change a counter (denials, upstream errors, sessions). */
  counted: ExchangeFacts[];
}

export class BatchBuilder {
  private spans: SpanEntry[] = [];
  private durations = new Map<string, [key: string, attributes: Attributes, seconds: number[]]>();
  private counted: ExchangeFacts[] = [];
  /** The series the previous exchange went to, and its facts: most exchanges repeat it. */
  private last: { facts: ExchangeFacts; seconds: number[] } | undefined;
  /** Exchanges added since the last take(). */
  size = 0;

  constructor(private readonly metrics: boolean) {}

  add(facts: ExchangeFacts, span: SpanPlacement | undefined): void {
    if (span) this.spans.push({ facts, span });
    if (this.metrics) {
      if (facts.method !== undefined) this.seriesOf(facts).push((facts.ended - facts.started) / 1000);
      if (changesCounters(facts)) this.counted.push(facts);
    }
    this.size++;
  }

  /** The durations of the facts' metric series (metricKey's values), without a key when it repeats. */
  private seriesOf(facts: ExchangeFacts): number[] {
    const last = this.last;
    if (last && sameSeries(last.facts, facts)) return last.seconds;
    const key = metricKey(facts);
    let series = this.durations.get(key);
    if (!series) this.durations.set(key, (series = [key, metricAttributes(facts), []]));
    this.last = { facts, seconds: series[2] };
    return series[2];
  }

  /** The batch so far, and a fresh start. */
  take(): ExchangeBatch {
    const batch = { spans: this.spans, durations: [...this.durations.values()], counted: this.counted };
    this.spans = [];
    this.durations = new Map();
    this.counted = [];
    this.last = undefined;
    this.size = 0;
    return batch;
  }
}

/** Whether two exchanges' metricKey would be equal, compared field by field. */
function sameSeries(a: ExchangeFacts, b: ExchangeFacts): boolean {
  return (
    a.method === b.method &&
    a.target === b.target &&
    a.error === b.error &&
    a.protocolVersion === b.protocolVersion &&
    a.httpVersion === b.httpVersion
  );
}
