/**
 * What a backend's Content-Type says its answer is. Media types are case-insensitive and may
 * carry parameters (RFC 9110 §8.3.1): `Text/Event-Stream; charset=utf-8` is an event stream.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** How an answer is framed by its label: an event stream, JSON (one message or JSON lines), or neither. */
export type AnswerLabel = 'sse' | 'json' | 'other';

/** The type/subtype of a Content-Type value, lower case, without parameters ('' when absent). */
export function mediaType(contentType: string | string[] | undefined): string {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (value === undefined) return '';
  const semicolon = value.indexOf(';');
  return (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
}

/** The label of an answer: `application/json` and any `+json` type are JSON. */
export function answerLabel(headers: IncomingHttpHeaders): AnswerLabel {
  const raw = headers['content-type'];
  // The usual labels, as every SDK writes them, without a lower-cased copy.
  if (raw === 'application/json') return 'json';
  if (raw === 'text/event-stream') return 'sse';
  const type = mediaType(raw);
  if (type === 'text/event-stream') return 'sse';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  return 'other';
}
