/**
 * `moat run [flags] SERVER_OR_IMAGE_OR_PROTOCOL [-- ARGS...]`: builds the RunConfig from the
 * flags (or loads it with --from-config), refuses features that are not implemented yet, then
 * hands the workload to the workload layer.
 */
import type { Command } from 'commander';
import { readRunConfigFile } from '../config/runconfig-file.js';
import type { RunConfig } from '../config/runconfig.js';
import type { CliIO } from '../util/io.js';
import { debugFromEnv, warnUser } from '../util/log.js';
import { runWorkload } from '../workloads/run.js';
import { buildRunConfig, fsBuildContext } from './run-build.js';
import { createRunCommand, readParsedRun, type ParsedRun } from './run-command.js';
import { checkFromConfigAlone, gateFlags, gateRunConfig } from './run-gate.js';

/** The RunConfig a `moat run` command line describes, checked against the feature gate. */
export async function resolveRunConfig(parsed: ParsedRun, io: CliIO): Promise<RunConfig> {
  const path = parsed.flags.fromConfig;
  if (path !== undefined) {
    checkFromConfigAlone(parsed);
    const config = await readRunConfigFile(path);
    gateRunConfig(config);
    return parsed.flags.debug ? { ...config, debug: true } : config;
  }
  gateFlags(parsed);
  // secretsToStore stays empty while the secret-values feature is gated (run-flags.ts).
  const { config } = buildRunConfig(
    parsed,
    fsBuildContext((message) => warnUser(message, io.stderr)),
  );
  return config;
}

function rootOf(cmd: Command): Command {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root;
}

export function runCommand(io: CliIO): Command {
  // Subcommands added with addCommand do not inherit these from the program.
  const cmd = createRunCommand()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  return cmd.action(async () => {
    // commander folds the arguments after `--` into the operands; the raw command line tells them apart.
    const rawArgs = (rootOf(cmd) as unknown as { rawArgs: string[] }).rawArgs;
    const parsed = readParsedRun(cmd, rawArgs);
    const debug = parsed.flags.debug || Boolean(cmd.optsWithGlobals().debug) || debugFromEnv();
    const withDebug: ParsedRun = { ...parsed, flags: { ...parsed.flags, debug } };
    const config = await resolveRunConfig(withDebug, io);
    await runWorkload(
      { config, foreground: parsed.flags.foreground, fromConfig: parsed.flags.fromConfig !== undefined },
      io,
    );
  });
}
