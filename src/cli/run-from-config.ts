/**
 * --from-config stands alone: the file replaces the target and every configuration flag, so
 * `moat run` refuses those next to it before reading the file.
 */
import { usageError } from '../util/errors.js';
import type { ParsedRun } from './run-command.js';
import type { RunFlagName } from './run-flag-values.js';

/**
 * Flags allowed next to --from-config: how and where this run starts, not what the workload is.
 * ToolHive allows only --foreground and --debug; a name, port, host or group of one's own is what
 * a user re-running an exported file on another machine (or next to the original) needs.
 */
export const FROM_CONFIG_COMPANIONS: readonly RunFlagName[] = [
  'from-config',
  'foreground',
  'debug',
  'name',
  'proxy-port',
  'host',
  'group',
  'skip-remote-check',
];

/** --from-config replaces the target and every configuration flag. */
export function checkFromConfigAlone(parsed: ParsedRun): void {
  const others = [...parsed.explicit].filter((flag) => !FROM_CONFIG_COMPANIONS.includes(flag));
  if (others.length > 0) {
    throw usageError(
      `--from-config cannot be used with other configuration flags: ${others.map((f) => `--${f}`).join(' ')} ` +
        `(allowed with it: ${FROM_CONFIG_COMPANIONS.filter((f) => f !== 'from-config')
          .map((f) => `--${f}`)
          .join(', ')})`,
    );
  }
  if (parsed.target !== undefined) {
    throw usageError(`--from-config replaces the target; remove ${JSON.stringify(parsed.target)}`);
  }
  if (parsed.serverArgs.length > 0) {
    throw usageError(
      '--from-config cannot take server arguments after --; they come from the file (cmd_args)',
    );
  }
}
