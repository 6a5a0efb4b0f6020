/**
 * Errors are values with a user message. A MoatError carries what went wrong and what is
 * allowed; the CLI renders it with its exit code and the proxy with its HTTP status, never
 * with a stack trace.
 */
export type ErrorKind = 'usage' | 'runtime';

export interface MoatErrorOptions {
  /** Exit code for the CLI: 2 for usage errors, 1 for runtime failures. */
  exitCode?: number;
  /** HTTP status when the error reaches a proxy client. */
  httpStatus?: number;
  cause?: unknown;
}

export class MoatError extends Error {
  readonly kind: ErrorKind;
  readonly exitCode: number;
  readonly httpStatus: number;

  constructor(kind: ErrorKind, message: string, options: MoatErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MoatError';
    this.kind = kind;
    this.exitCode = options.exitCode ?? (kind === 'usage' ? 2 : 1);
    this.httpStatus = options.httpStatus ?? (kind === 'usage' ? 400 : 500);
  }
}

/** A user mistake on the command line or in a config file: exit code 2. */
export function usageError(message: string, options?: MoatErrorOptions): MoatError {
  return new MoatError('usage', message, options);
}

/** Something failed at run time (runtime unreachable, container died, ...): exit code 1. */
export function runtimeError(message: string, options?: MoatErrorOptions): MoatError {
  return new MoatError('runtime', message, options);
}

/** Input asking for something this version of moat does not do: refused loudly, never ignored. */
export function notImplemented(what: string): MoatError {
  return usageError(`${what} is not implemented yet in this version of moat`);
}

export function isMoatError(err: unknown): err is MoatError {
  return err instanceof MoatError;
}

/** The message of any thrown value, for logs and wrapped errors. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
