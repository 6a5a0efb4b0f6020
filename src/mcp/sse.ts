/**
 * Server-Sent Events as text: an incremental parser and event formatting, shared by the proxy's
 * transports (src/proxy/pipeline/sse.ts writes the streams) and the aggregator's direct
 * `tools/call` path, which reads a member's event stream without the MCP SDK.
 */
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** The event as received, including its terminating blank line. */
  raw: string;
  event?: string;
  /** The data lines joined with '\n'; undefined when the event has no data field. */
  data?: string;
  /** Its `id` field: where a client that lost the stream resumes it. */
  id?: string;
  /** Its `retry` field (milliseconds), when it is a number. */
  retry?: number;
  /** A line that is neither a comment nor a field of the standard (data, event, id, retry). */
  stray?: true;
}

/**
 * Splits a byte stream into SSE events; call push() per chunk, flush() at the end. Lines end in
 * CRLF, LF or a bare CR, and one byte order mark may open the stream (the SSE standard's rules):
 * a policy sees every event a client's parser would see.
 */
export class SseParser {
  readonly #decoder = new StringDecoder('utf8');
  #buffer = '';
  /** How far #buffer was searched for the end of an event without finding it. */
  #searched = 0;
  /** The decoder holds no partial character (the last chunk ended in an ASCII byte). */
  #decoderIdle = true;
  #started = false;

  /** No partial event is held: the next chunk starts a new event. */
  get atBoundary(): boolean {
    return this.#buffer === '' && this.#decoderIdle;
  }

  push(chunk: Buffer | string): SseEvent[] {
    if (typeof chunk === 'string') this.#buffer += chunk;
    else {
      this.#buffer += this.#decoder.write(chunk);
      this.#decoderIdle = chunk.length === 0 || (chunk[chunk.length - 1] as number) < 0x80;
    }
    if (!this.#started && this.#buffer !== '') {
      this.#started = true;
      if (this.#buffer.charCodeAt(0) === 0xfeff) this.#buffer = this.#buffer.slice(1);
    }
    const events: SseEvent[] = [];
    for (;;) {
      const stop = eventEnd(this.#buffer, this.#searched);
      if (stop === -1) {
        // The last character may yet start a blank line with the next chunk.
        this.#searched = Math.max(0, this.#buffer.length - 1);
        break;
      }
      events.push(parseEvent(this.#buffer.slice(0, stop)));
      this.#buffer = this.#buffer.slice(stop);
      this.#searched = 0;
    }
    return events;
  }

  /**
   * The unterminated rest, if any: an event the stream ended without its blank line (its data
   * still seen by `rest.data`), or '' (raw).
   */
  flush(): SseEvent {
    const rest = this.#buffer + this.#decoder.end();
    this.#buffer = '';
    this.#searched = 0;
    this.#decoderIdle = true;
    return parseEvent(rest);
  }
}

/**
 * Where the first event in `text` ends (just after its blank line), or -1; the search starts at
 * `from` (text before it was searched already; the state there follows from the character
 * before it). A bare CR at the very end may be the first half of a CRLF: the answer waits.
 */
function eventEnd(text: string, from: number): number {
  // The usual stream has no CR at all: one native search.
  if (text.indexOf('\r', from) === -1) {
    const lf = text.indexOf('\n\n', from);
    return lf === -1 ? -1 : lf + 2;
  }
  const before = from === 0 ? -1 : text.charCodeAt(from - 1);
  let lineEmpty = from === 0 || before === LF || before === CR;
  let afterCr = before === CR;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === LF && afterCr) {
      afterCr = false; // the second half of a CRLF
      continue;
    }
    if (c !== LF && c !== CR) {
      lineEmpty = false;
      afterCr = false;
      continue;
    }
    if (lineEmpty) {
      if (c === LF) return i + 1;
      if (i + 1 === text.length) return -1;
      return text.charCodeAt(i + 1) === LF ? i + 2 : i + 1;
    }
    lineEmpty = true;
    afterCr = c === CR;
  }
  return -1;
}

const LF = 0x0a;
const CR = 0x0d;

function parseEvent(raw: string): SseEvent {
  const event: SseEvent = { raw };
  const data: string[] = [];
  for (const line of raw.split(LINE_END)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event.event = value;
    else if (field === 'id') event.id = value;
    else if (field === 'retry') {
      if (/^\d+$/.test(value)) event.retry = Number(value);
    } else event.stray = true;
  }
  if (data.length > 0) event.data = data.join('\n');
  return event;
}

/** A line end in an event stream: CRLF, LF or a bare CR. */
const LINE_END = /\r\n|\r|\n/;

/** The event with its data replaced; every other field (id, event, retry) is kept, stray lines dropped. */
export function withData(event: SseEvent, data: string): string {
  const kept = event.raw.split(LINE_END).filter((line) => /^(event|id|retry)(:|$)/.test(line));
  return `${[...kept, ...data.split('\n').map((d) => `data: ${d}`)].join('\n')}\n\n`;
}

export function formatEvent(event: string, data: string): string {
  return `event: ${event}\n${data
    .split('\n')
    .map((d) => `data: ${d}`)
    .join('\n')}\n\n`;
}
