/**
 * `moat run [flags] SERVER_OR_IMAGE_OR_PACKAGE_OR_URL [-- ARGS...]`: builds the RunConfig from the
 * flags (or loads it with --from-config), then hands the workload to the workload layer.
 */
import type { Command } from 'commander';
import type { RunConfig } from '../config/runconfig.js';
import { readRunConfigFile } from '../config/runconfig-file.js';
import type { CliIO } from '../util/io.js';
import { debugFromEnv, warnUser } from '../util/log.js';
import { assertValidName } from '../workloads/names.js';
import { runWorkload } from '../workloads/run.js';
import { buildRunConfig, fsBuildContext, type BuiltRun } from './run-build.js';
import { createRunCommand, readParsedRun, type ParsedRun } from './run-command.js';
import { checkFromConfigAlone } from './run-from-config.js';
import { resolveRegistryTarget } from './run-registry.js';
import { parseHost } from './run-values.js';

/**
 * The RunConfig a `moat run` command line describes, and the secret values given as flags (stored
 * by the workload layer once the name is claimed).
 */
export async function resolveRunConfig(parsed: ParsedRun, io: CliIO): Promise<BuiltRun> {
  const path = parsed.flags.fromConfig;
  if (path !== undefined) {
    checkFromConfigAlone(parsed);
    const config = await readRunConfigFile(path);
    return { config: withRunTimeFlags(config, parsed), secretsToStore: [] };
  }
  const resolved = await resolveRegistryTarget(parsed, { io });
  return buildRunConfig(
    resolved,
    fsBuildContext((message) => warnUser(message, io.stderr)),
  );
}

/** The flags allowed next to --from-config (FROM_CONFIG_COMPANIONS) override the file's fields. */
function withRunTimeFlags(config: RunConfig, parsed: ParsedRun): RunConfig {
  const { flags, explicit } = parsed;
  const name = explicit.has('name') ? flags.name : undefined;
  if (explicit.has('group')) assertValidName(flags.group, 'group name (--group)');
  return {
    ...config,
    ...(name !== undefined ? { name, container_name: name, base_name: name } : {}),
    ...(explicit.has('proxy-port') && flags.proxyPort !== undefined ? { port: flags.proxyPort } : {}),
    ...(explicit.has('host') ? { host: parseHost('host', flags.host) } : {}),
    ...(explicit.has('group') ? { group: flags.group } : {}),
    ...(flags.debug ? { debug: true } : {}),
  };
}

function rootOf(cmd: Command): Command {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root;
}

export function runCommand(io: CliIO): Command {
  const cmd = createRunCommand();
  return cmd.action(async () => {
    // commander folds the arguments after `--` into the operands; the raw command line tells them apart.
    const rawArgs = (rootOf(cmd) as unknown as { rawArgs: string[] }).rawArgs;
    const parsed = readParsedRun(cmd, rawArgs);
    const debug = parsed.flags.debug || Boolean(cmd.optsWithGlobals().debug) || debugFromEnv();
    const withDebug: ParsedRun = { ...parsed, flags: { ...parsed.flags, debug } };
    const { config, secretsToStore } = await resolveRunConfig(withDebug, io);
    await runWorkload(
      {
        config,
        foreground: parsed.flags.foreground,
        fromConfig: parsed.flags.fromConfig !== undefined,
        secretsToStore,
        skipRemoteCheck: parsed.flags.skipRemoteCheck,
      },
      io,
    );
  });
}
