/**
 * What `moat group serve <group>` does once parsed: the aggregate's naming from its own flags,
 * the RunConfig from the run flags (run-build.ts, with the group as the target), then the
 * workload layer starts it like any other workload (which checks the group exists).
 */
import type { Command } from 'commander';
import { aggregateConfigSchema, type AggregateConfig, type NamingStrategy } from '../config/aggregate.js';
import { parseNamingOverrides } from '../config/inputs.js';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { debugFromEnv, warnUser } from '../util/log.js';
import { assertValidName } from '../workloads/names.js';
import { runWorkload } from '../workloads/run.js';
import { fsBuildContext, type BuildContext } from './run-build-context.js';
import { buildRunConfig, type BuiltRun } from './run-build.js';
import { readRunFlags, type ParsedRun } from './run-command.js';
import { resolve } from 'node:path';

/** The values of the serve flags (group-serve.ts SERVE_FLAGS), as commander parsed them. */
export interface ServeNamingFlags {
  naming?: NamingStrategy;
  separator?: string;
  priority?: string;
  namingConfig?: string;
}

/** The `aggregate` section from the serve flags; a flag that does not fit the strategy is a usage error naming it. */
export function aggregateFromFlags(
  group: string,
  flags: ServeNamingFlags,
  ctx: BuildContext,
): AggregateConfig {
  assertValidName(group, 'group name');
  const strategy = flags.naming ?? 'prefix';
  const only = (flag: string, set: unknown, allowed: readonly NamingStrategy[]): void => {
    if (set !== undefined && !allowed.includes(strategy)) {
      throw usageError(
        `--${flag} only applies to --naming ${allowed.join(' or ')} (the naming strategy is ${strategy})`,
      );
    }
  };
  only('separator', flags.separator, ['prefix', 'manual']);
  only('priority', flags.priority, ['priority']);
  only('naming-config', flags.namingConfig, ['manual']);
  if (strategy === 'manual' && flags.namingConfig === undefined) {
    throw usageError('--naming manual needs --naming-config FILE (the tools and prompts to rename or hide)');
  }
  const order = flags.priority?.split(',').map((s) => s.trim());
  if (order?.some((s) => s === ''))
    throw usageError('--priority: expected a comma-separated list of workload names without empty items');
  const overrides =
    flags.namingConfig === undefined
      ? undefined
      : parseNamingOverrides(
          ctx.readTextFile(resolve(ctx.cwd, flags.namingConfig), 'naming-config'),
          `--naming-config ${flags.namingConfig}`,
        );
  const naming = {
    strategy,
    ...(flags.separator !== undefined ? { separator: flags.separator } : {}),
    ...(order !== undefined ? { order } : {}),
    ...(overrides !== undefined ? { overrides } : {}),
  };
  const result = aggregateConfigSchema.safeParse({ group, naming });
  if (!result.success) {
    const issue = result.error.issues[0];
    const flag =
      issue?.path[1] === 'separator' ? 'separator' : issue?.path[1] === 'order' ? 'priority' : 'naming';
    throw usageError(`--${flag}: ${issue?.message ?? result.error.message}`);
  }
  return result.data;
}

/** The parsed `moat group serve` command line: run flags with the group served as the target. */
export function parseServe(cmd: Command, group: string, ctx: BuildContext): ParsedRun {
  const { flags, explicit } = readRunFlags(cmd);
  const aggregate = aggregateFromFlags(group, cmd.opts<ServeNamingFlags>(), ctx);
  // The aggregate joins the group it serves unless --group puts it elsewhere (it never serves itself).
  return {
    flags: explicit.has('group') ? flags : { ...flags, group },
    explicit,
    serverArgs: [],
    aggregate,
  };
}

/** The RunConfig `moat group serve` describes (pure but for the BuildContext). */
export function buildServeConfig(cmd: Command, group: string, ctx: BuildContext): BuiltRun {
  return buildRunConfig(parseServe(cmd, group, ctx), ctx);
}

export async function serveAction(cmd: Command, group: string, io: CliIO): Promise<void> {
  const ctx = fsBuildContext((message) => warnUser(message, io.stderr));
  const { flags } = readRunFlags(cmd);
  const debug = flags.debug || Boolean(cmd.optsWithGlobals().debug) || debugFromEnv();
  const { config, secretsToStore } = buildServeConfig(cmd, group, ctx);
  await runWorkload(
    {
      config: debug ? { ...config, debug: true } : config,
      foreground: flags.foreground,
      fromConfig: false,
      secretsToStore,
    },
    io,
  );
}
