/**
 * One structured logger (pino) for the CLI, supervisor and proxy. Debug comes from --debug or
 * MOAT_DEBUG=true. Known secret-bearing fields are redacted wherever they appear. A terminal gets
 * readable lines; a file or pipe (a detached supervisor's log) gets JSON.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { defaultLogFormat, formatLogRecord, type LogFormat } from './log-format.js';

export const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'token',
  '*.token',
  'password',
  '*.password',
  'client_secret',
  '*.client_secret',
  'secret',
  '*.secret',
];

export function debugFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true|yes)$/i.test(env.MOAT_DEBUG ?? '');
}

let root: Logger = createLogger(debugFromEnv());

export function createLogger(
  debug: boolean,
  destination: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  format: LogFormat = defaultLogFormat(destination),
): Logger {
  return pino(
    {
      level: debug ? 'debug' : 'info',
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    format === 'json' ? destination : readableDestination(destination),
  );
}

/** pino writes one record per call, ending in a newline. */
function readableDestination(destination: NodeJS.WritableStream): DestinationStream {
  return { write: (record: string) => destination.write(`${formatLogRecord(record.trimEnd())}\n`) };
}

export function setDebug(debug: boolean): void {
  root.level = debug ? 'debug' : 'info';
}

export function log(): Logger {
  return root;
}

export function setLogger(logger: Logger): void {
  root = logger;
}

/** A plain-text warning for a person at a terminal (CLI commands); logs stay structured. */
export function warnUser(message: string, stream: NodeJS.WritableStream = process.stderr): void {
  stream.write(`Warning: ${message}\n`);
}
