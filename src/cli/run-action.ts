/**
 * What `moat run` does once its command line is parsed: builds the RunConfig from the flags (or
 * loads it with --from-config), then hands the workload to the workload layer. Loaded only when
 * `moat run` runs (run.ts), so the other commands and `moat --help` start without it.
 */
import type { Command } from 'commander';
import type { RunConfig } from '../config/runconfig.js';
import { readRunConfigFile } from '../config/runconfig-file.js';
import type { CliIO } from '../util/io.js';
import { debugFromEnv, warnUser } from '../util/log.js';
import { assertValidName } from '../workloads/names.js';
import { runWorkload } from '../workloads/run.js';
import { fsBuildContext } from './run-build-context.js';
import { buildRunConfig, type BuiltRun } from './run-build.js';
import { readParsedRun, type ParsedRun } from './run-command.js';
import { checkFromConfigAlone } from './run-from-config.js';
import type { ImageProvenance } from '../runtime/verify/provenance.js';
import { provenanceOfSavedEntry, resolveRegistryTarget } from './run-registry.js';
import { parseHost } from './run-values.js';

export interface ResolvedRun extends BuiltRun {
  /** The image's provenance from its registry entry, for --image-verification. */
  provenance?: ImageProvenance;
}

/**
 * The RunConfig a `moat run` command line describes, the secret values given as flags (stored by
 * the workload layer once the name is claimed), and the provenance of a registry entry's image. A
 * --from-config file names its entry (`registry_server_name`), whose provenance is looked up again.
 */
export async function resolveRunConfig(parsed: ParsedRun, io: CliIO): Promise<ResolvedRun> {
  const path = parsed.flags.fromConfig;
  if (path !== undefined) {
    checkFromConfigAlone(parsed);
    const config = await readRunConfigFile(path);
    const provenance = await provenanceOfSavedEntry(config, { io });
    return {
      config: withRunTimeFlags(config, parsed),
      secretsToStore: [],
      ...(provenance !== undefined ? { provenance } : {}),
    };
  }
  const resolved = await resolveRegistryTarget(parsed, { io });
  const built = buildRunConfig(
    resolved,
    fsBuildContext((message) => warnUser(message, io.stderr)),
  );
  const provenance = resolved.registry?.provenance;
  return { ...built, ...(provenance !== undefined ? { provenance } : {}) };
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

/** The action of `moat run` (`cmd` is the parsed run command). */
export async function runAction(cmd: Command, io: CliIO): Promise<void> {
  // commander folds the arguments after `--` into the operands; the raw command line tells them apart.
  const rawArgs = (rootOf(cmd) as unknown as { rawArgs: string[] }).rawArgs;
  const parsed = readParsedRun(cmd, rawArgs);
  const debug = parsed.flags.debug || Boolean(cmd.optsWithGlobals().debug) || debugFromEnv();
  const withDebug: ParsedRun = { ...parsed, flags: { ...parsed.flags, debug } };
  const { config, secretsToStore, provenance } = await resolveRunConfig(withDebug, io);
  await runWorkload(
    {
      config,
      foreground: parsed.flags.foreground,
      fromConfig: parsed.flags.fromConfig !== undefined,
      secretsToStore,
      skipRemoteCheck: parsed.flags.skipRemoteCheck,
      ...(provenance !== undefined ? { provenance } : {}),
    },
    io,
  );
}
