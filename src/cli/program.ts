/**
 * Builds the `moat` command tree and runs it. Errors are rendered as one line naming what was
 * wrong and what is allowed; exit code 2 for usage errors, 1 for runtime failures.
 */
import { Command, CommanderError } from 'commander';
import { debugFromEnv, setDebug } from '../util/log.js';
import { reportFailure } from './exit.js';
import { versionCommand } from './version.js';
import { runCommand } from './run.js';
import { secretCommand } from './secret.js';
import { listCommand } from './list.js';
import { stopCommand } from './stop.js';
import { startCommand } from './start.js';
import { rmCommand } from './rm.js';
import { logsCommand } from './logs.js';
import { exportCommand } from './export.js';
import { groupCommand } from './group.js';
import { processIO, type CliIO } from '../util/io.js';

export type { CliIO };

export function buildProgram(io: CliIO): Command {
  const program = new Command('moat')
    .description('Run MCP servers safely behind a policy-enforcing proxy')
    .option('--debug', 'Enable debug mode (also MOAT_DEBUG=true)', false)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride()
    .showHelpAfterError(false);
  program.hook('preAction', (cmd) => {
    setDebug(Boolean(cmd.optsWithGlobals().debug) || debugFromEnv());
  });
  program.addCommand(runCommand(io));
  program.addCommand(versionCommand(io));
  program.addCommand(secretCommand(io));
  for (const lifecycle of [
    listCommand,
    stopCommand,
    startCommand,
    rmCommand,
    logsCommand,
    exportCommand,
    groupCommand,
  ]) {
    program.addCommand(lifecycle(io));
  }
  return program;
}

export async function runCli(argv: string[], io: CliIO = processIO): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version requests end with exit code 0; commander already printed the message.
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      return err.exitCode === 0 ? 0 : 2;
    }
    return reportFailure(err, io);
  }
}
