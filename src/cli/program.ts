/**
 * Builds the `moat` command tree and runs it. Errors are rendered as one line naming what was
 * wrong and what is allowed; exit code 2 for usage errors, 1 for runtime failures.
 */
import { Command, CommanderError, Help, Option } from 'commander';
import { debugFromEnv, setDebug } from '../util/log.js';
import { errorLine, reportFailure } from './exit.js';
import { versionLine } from './version.js';
import { processIO, type CliIO } from '../util/io.js';
import { WorkloadStore } from '../workloads/store.js';
import { followWorkloadChanges } from './client-sync.js';

export type { CliIO };

/** `moat --version`/`-v`: handled before parsing, so `moat run -v` stays the volume flag. */
const VERSION_FLAGS = new Set(['--version', '-v']);
const VERSION_OPTION = new Option('-v, --version', 'Show the version of moat');

type CommandFactory = (io: CliIO) => Command;

/**
 * The top-level commands, each loaded on demand: a command line names one of them, and loading
 * only that one keeps the others' dependencies (the run command's image verification, the
 * registry's HTTP client, the YAML parser...) out of e.g. `moat list` (docs/performance.md, CLI).
 * `names` are the command's name and aliases, as its module defines them.
 */
const COMMANDS: Array<{ names: string[]; load: () => Promise<CommandFactory> }> = [
  { names: ['run'], load: async () => (await import('./run.js')).runCommand },
  { names: ['version'], load: async () => (await import('./version.js')).versionCommand },
  { names: ['secret'], load: async () => (await import('./secret.js')).secretCommand },
  { names: ['list', 'ls'], load: async () => (await import('./list.js')).listCommand },
  { names: ['stop'], load: async () => (await import('./stop.js')).stopCommand },
  { names: ['start'], load: async () => (await import('./start.js')).startCommand },
  { names: ['restart'], load: async () => (await import('./start.js')).restartCommand },
  { names: ['rm'], load: async () => (await import('./rm.js')).rmCommand },
  { names: ['logs'], load: async () => (await import('./logs.js')).logsCommand },
  { names: ['export'], load: async () => (await import('./export.js')).exportCommand },
  { names: ['group'], load: async () => (await import('./group.js')).groupCommand },
  { names: ['registry'], load: async () => (await import('./registry.js')).registryCommand },
  { names: ['search'], load: async () => (await import('./search.js')).searchCommand },
  { names: ['config'], load: async () => (await import('./config.js')).configCommand },
  { names: ['tools'], load: async () => (await import('./tools.js')).toolsCommand },
  { names: ['client'], load: async () => (await import('./client.js')).clientCommand },
  { names: ['ui'], load: async () => (await import('./ui.js')).uiCommand },
];

/** The first argument that is not an option: the command a command line names, if any. */
function commandName(argv: string[]): string | undefined {
  return argv.find((arg) => !arg.startsWith('-'));
}

/**
 * The `moat` program with the command `argv` names, or with every command when it names none
 * that exists (help, a typo: commander then lists them all).
 */
export async function buildProgram(io: CliIO, argv: string[] = []): Promise<Command> {
  const name = commandName(argv);
  const named = COMMANDS.filter((c) => name !== undefined && c.names.includes(name));
  const factories = await Promise.all((named.length > 0 ? named : COMMANDS).map((c) => c.load()));
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
  for (const factory of factories) program.addCommand(factory(io));
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
  const program = await buildProgram(io, argv);
  const unfollow = followWorkloadChanges(io, () => new WorkloadStore());
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    // commander printed its message already: help on request ends with 0; every parse error and
    // a command group without its subcommand (help shown as an error) are usage errors.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    return reportFailure(err, io);
  } finally {
    unfollow();
  }
}
