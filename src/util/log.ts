/**
 * One structured logger (pino) for the CLI, supervisor and proxy. Debug comes from --debug or
 * MOAT_DEBUG=true. Known secret-bearing fields are redacted wherever they appear. A terminal gets
 * readable lines; a file or pipe (a detached supervisor's log) gets JSON.
 */
import { createRequire } from 'node:module';
import type { DestinationStream, Logger, pino as createPino } from 'pino';
import { defaultLogFormat, formatLogRecord, type LogFormat } from './log-format.js';

/**
 * pino and its helpers are loaded when the first logger is made: a command that never logs
 * (`moat list`, `moat --help`) starts without them (docs/performance.md, "CLI responsiveness").
 * pino is CommonJS, so it can be required synchronously where a logger is needed.
 */
const requirePino = (): typeof createPino =>
  (createRequire(import.meta.url)('pino') as { pino: typeof createPino }).pino;

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

/** The process's logger, made on first use; `debugWanted` is what setDebug asked for before that. */
let root: Logger | undefined;
let debugWanted: boolean | undefined;

export function createLogger(
  debug: boolean,
  destination: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  format: LogFormat = defaultLogFormat(destination),
): Logger {
  const pino = requirePino();
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

export function setDebug(on: boolean): void {
  debugWanted = on;
  if (root) root.level = on ? 'debug' : 'info';
}

export function log(): Logger {
  return (root ??= createLogger(debugWanted ?? debugFromEnv()));
}

export function setLogger(logger: Logger): void {
  root = logger;
}

/** A plain-text warning for a person at a terminal (CLI commands); logs stay structured. */
export function warnUser(message: string, stream: NodeJS.WritableStream = process.stderr): void {
  stream.write(`Warning: ${message}\n`);
}
