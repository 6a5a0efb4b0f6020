/**
 * The combined matcher: the enabled detectors' patterns as the alternatives of one regular
 * expression, so a text is read once whatever the number of detectors. Each alternative is a
 * capture group; the group that matched names the detector, and its check (Luhn, IBAN, …) runs
 * on that candidate only. Redaction replaces each finding with `[REDACTED:<detector>]`.
 */
import type { Detector } from './detectors.js';

export interface Hit {
  detector: string;
  start: number;
  end: number;
}

export interface Matcher {
  /** The checked findings in `text`, in order, not overlapping. */
  scan(text: string): Hit[];
}

export function placeholder(detector: string): string {
  return `[REDACTED:${detector}]`;
}

function combined(detectors: readonly Detector[], flags: string): RegExp {
  return new RegExp(detectors.map((d) => `(${d.pattern})`).join('|'), flags);
}

/** The detector whose group matched (every detector is one group, in order). */
function matched(detectors: readonly Detector[], match: RegExpExecArray): Detector {
  for (let i = 0; i < detectors.length; i++) if (match[i + 1] !== undefined) return detectors[i] as Detector;
  throw new Error('a match with no detector group');
}

export function createMatcher(detectors: readonly Detector[]): Matcher {
  const regex = combined(detectors, 'g');
  // For the value of a `name = value` rule: the specific formats, tried at the value's start only.
  const specific = detectors.filter((d) => d.valueAt === undefined);
  const atValue = specific.length > 0 ? combined(specific, 'y') : undefined;
  return {
    scan(text) {
      const hits: Hit[] = [];
      regex.lastIndex = 0;
      let match: RegExpExecArray | null;
      while ((match = regex.exec(text)) !== null) {
        const found = match[0];
        if (found.length === 0) {
          regex.lastIndex++;
          continue;
        }
        const detector = matched(detectors, match);
        if (detector.valid !== undefined && !detector.valid(found)) continue;
        let start = match.index;
        if (detector.valueAt !== undefined) {
          start += detector.valueAt(found);
          const inner = atValue && valueFormat(atValue, specific, text, start);
          if (inner) {
            hits.push(inner);
            regex.lastIndex = Math.max(regex.lastIndex, inner.end);
            continue;
          }
        }
        hits.push({ detector: detector.id, start, end: match.index + found.length });
      }
      return hits;
    },
  };
}

/** A specific detector's checked match starting exactly at `start`, if any. */
function valueFormat(
  sticky: RegExp,
  detectors: readonly Detector[],
  text: string,
  start: number,
): Hit | undefined {
  sticky.lastIndex = start;
  const match = sticky.exec(text);
  if (match === null) return undefined;
  const detector = matched(detectors, match);
  if (detector.valid !== undefined && !detector.valid(match[0])) return undefined;
  return { detector: detector.id, start, end: start + match[0].length };
}

/** `text` with every hit in `redact` replaced by its placeholder. */
export function redactText(
  text: string,
  hits: readonly Hit[],
  redact: (detector: string) => boolean,
): string {
  let out = '';
  let from = 0;
  for (const hit of hits) {
    if (!redact(hit.detector)) continue;
    out += text.slice(from, hit.start) + placeholder(hit.detector);
    from = hit.end;
  }
  return from === 0 ? text : out + text.slice(from);
}
