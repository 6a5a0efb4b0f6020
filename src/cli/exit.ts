/**
 * How a failed command ends: one line naming what was wrong, exit code 2 for usage errors and 1
 * for runtime failures; the stack trace only in debug mode.
 */
import { isMoatError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { debugFromEnv } from '../util/log.js';

/** moat's one error style, for its own errors and commander's parse errors alike. */
export function errorLine(message: string): string {
  return `Error: ${message}\n`;
}

export function reportFailure(err: unknown, io: CliIO): number {
  if (isMoatError(err)) {
    io.stderr.write(errorLine(err.message));
    return err.exitCode;
  }
  io.stderr.write(errorLine(err instanceof Error ? err.message : String(err)));
  if (debugFromEnv()) io.stderr.write(`${err instanceof Error ? err.stack : ''}\n`);
  return 1;
}

/**
 * Runs a long-lived command (the supervisor, the pod's proxy) with a signal that SIGTERM or SIGINT
 * aborts; a failure ends it as every command ends.
 */
export async function runUntilStopped(
  command: (stopped: AbortSignal) => Promise<number>,
  io: CliIO,
): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    return await command(controller.signal);
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}
