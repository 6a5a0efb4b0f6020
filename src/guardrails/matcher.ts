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

export function createMatcher(detectors: readonly Detector[]): Matcher {
  const source = detectors.map((d) => `(${d.pattern})`).join('|');
  const regex = new RegExp(source, 'g');
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
        for (let i = 0; i < detectors.length; i++) {
          if (match[i + 1] === undefined) continue;
          const detector = detectors[i] as Detector;
          if (detector.valid === undefined || detector.valid(found)) {
            hits.push({ detector: detector.id, start: match.index, end: match.index + found.length });
          }
          break;
        }
      }
      return hits;
    },
  };
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
