/**
 * Go-style durations ("30s", "1m", "2m30s", "1h0m0s", "250ms"), the format ToolHive's
 * RunConfig uses for session_ttl, so configs move between the two tools.
 */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;

/** RunConfig nanosecond fields (ToolHive's time.Duration as a number) per millisecond. */
export const NS_PER_MS = 1_000_000;

/** Parses a duration into milliseconds; returns undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const start = PART.lastIndex;
    const m = PART.exec(s);
    if (!m || m.index !== start) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return Math.round(total);
}

/** Formats milliseconds the way Go's time.Duration.String() does ("2h0m0s", "1m30s", "500ms"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const totalSeconds = ms / 1000;
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = +(totalSeconds % 60).toFixed(3);
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** The shortest Go-style form, for people to read ("2h", "1h30m", "30s", "500ms"). */
export function formatDurationShort(ms: number): string {
  return formatDuration(ms)
    .replace(/(?<=[hm])0s$/, '')
    .replace(/(?<=h)0m$/, '');
}
