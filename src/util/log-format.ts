/**
 * Log lines for a person: pino's JSON records as `time LEVEL message key=value…`. Terminals get
 * this; files and pipes keep the JSON (`moat logs --format json` prints it as stored).
 */
import { Transform } from 'node:stream';

export type LogFormat = 'text' | 'json';

const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Text on a terminal, JSON anywhere else. */
export function defaultLogFormat(stream: { isTTY?: boolean }): LogFormat {
  return stream.isTTY === true ? 'text' : 'json';
}

/** One JSON record (without its newline) as a readable line; anything else is returned as is. */
export function formatLogRecord(line: string): string {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return line;
  const { time, level, msg, ...fields } = record as Record<string, unknown>;
  const parts = [
    typeof time === 'string' ? time.replace('T', ' ') : '-',
    levelName(level).padEnd(5),
    typeof msg === 'string' ? msg : '',
    ...Object.entries(fields).map(([key, value]) => `${key}=${fieldValue(value)}`),
  ];
  return parts.filter((part) => part !== '').join(' ');
}

function levelName(level: unknown): string {
  if (typeof level === 'number') return LEVELS[level] ?? String(level);
  return typeof level === 'string' ? level : '-';
}

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** A stream that turns JSON log lines into readable ones; a partial last line waits for its end. */
export function textLogLines(): Transform {
  let pending = '';
  return new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const lines = (pending + String(chunk)).split('\n');
      pending = lines.pop() ?? '';
      callback(null, lines.map((line) => `${formatLogRecord(line)}\n`).join(''));
    },
    flush(callback) {
      callback(null, pending === '' ? '' : `${formatLogRecord(pending)}\n`);
    },
  });
}
