/**
 * Builds the `moat` command tree and runs it. Errors are rendered as one line naming what was
 * wrong and what is allowed; exit code 2 for usage errors, 1 for runtime failures.
 */
import { Command, CommanderError, Help, Option } from 'commander';
import { debugFromEnv, setDebug } from '../util/log.js';
import { errorLine, reportFailure } from './exit.js';
import { versionCommand, versionLine } from './version.js';
import { runCommand } from './run.js';
import { secretCommand } from './secret.js';
import { listCommand } from './list.js';
import { stopCommand } from './stop.js';
import { restartCommand, startCommand } from './start.js';
import { rmCommand } from './rm.js';
import { logsCommand } from './logs.js';
import { exportCommand } from './export.js';
import { groupCommand } from './group.js';
import { configCommand } from './config.js';
import { registryCommand } from './registry.js';
import { searchCommand } from './search.js';
import { toolsCommand } from './tools.js';
import { processIO, type CliIO } from '../util/io.js';

export type { CliIO };

/** `moat --version`/`-v`: handled before parsing, so `moat run -v` stays the volume flag. */
const VERSION_FLAGS = new Set(['--version', '-v']);
const VERSION_OPTION = new Option('-v, --version', 'Show the version of moat');

export function buildProgram(io: CliIO): Command {
  const program = new Command('moat')
    .description('Run MCP servers safely behind a policy-enforcing proxy')
    .option('--debug', 'Enable debug mode (also MOAT_DEBUG=true)', false)
    .showHelpAfterError(false)
    .configureHelp({
      visibleOptions(cmd) {
        return [VERSION_OPTION, ...Help.prototype.visibleOptions.call(this, cmd)];
      },
    });
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
    restartCommand,
    rmCommand,
    logsCommand,
    exportCommand,
    groupCommand,
    registryCommand,
    searchCommand,
    configCommand,
    toolsCommand,
  ]) {
    program.addCommand(lifecycle(io));
  }
  // `moat proxy` and `moat operator` are routed before the tree is built (main.ts): listed here so help names them.
  program.addHelpText(
    'after',
    "\nAlso: moat proxy --config <file>  run a remote server's proxy in the foreground (Kubernetes pods)" +
      '\n      moat operator [options]       run the Kubernetes operator for MCPRemoteProxy (docs/operator.md)',
  );
  reportThroughRunCli(program, io);
  return program;
}

/**
 * Every command of the tree throws instead of exiting and writes its parse errors in moat's one
 * error style: commands added with addCommand do not inherit these settings from the program.
 */
function reportThroughRunCli(cmd: Command, io: CliIO): void {
  cmd.exitOverride().configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
    outputError: (s, write) => write(errorLine(s.replace(/^error: /, '').trimEnd())),
  });
  for (const sub of cmd.commands) reportThroughRunCli(sub, io);
}

export async function runCli(argv: string[], io: CliIO = processIO): Promise<number> {
  if (argv.length === 1 && VERSION_FLAGS.has(argv[0] ?? '')) {
    io.stdout.write(`${versionLine()}\n`);
    return 0;
  }
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    // commander printed its message already: help on request ends with 0; every parse error and
    // a command group without its subcommand (help shown as an error) are usage errors.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    return reportFailure(err, io);
  }
}
