/**
 * `moat group serve <group>`: the group's workloads served as one MCP endpoint, itself a workload
 * (an aggregate: `moat list`, `stop`, `start`, `export`, `rm` as any other). Its own flags choose
 * how the members' tools and prompts are named; every `moat run` flag of the proxy (OIDC,
 * authorization, audit, telemetry, rate limits, --tools, sessions...) applies to its front, from
 * the same flag table. The run flags an aggregate cannot use (container, build, remote) are parsed
 * but hidden, and refused with a message naming them (run-flag-applicability.ts). What it does is
 * loaded when it runs (group-serve-action.ts).
 */
import type { Command } from 'commander';
import { Option } from 'commander';
// defaults.ts, not aggregate.ts: `moat --help` builds this command and must not load zod.
import { DEFAULT_NAME_SEPARATOR, NAMING_STRATEGIES } from '../config/defaults.js';
import type { CliIO } from '../util/io.js';
import { addRunFlags, RunFlagsCommand } from './run-command.js';
import { AGGREGATE_REFUSED } from './run-flag-applicability.js';
import type { RunFlagSpec } from './run-flag-spec.js';

/** The flags of `moat group serve` beside the run flags: one row each, for the command and docs/cli.md. */
export const SERVE_FLAGS = [
  {
    flags: '--naming <strategy>',
    help: "How the members' tools and prompts are named: prefix (member__tool: never a conflict), priority (names kept; on a conflict the first member of --priority wins), manual (--naming-config renames or hides; conflicts left are prefixed)",
    choices: NAMING_STRATEGIES,
    default: 'prefix',
  },
  {
    flags: '--separator <sep>',
    help: "Between a member's name and its tool's under prefix and manual (1-8 of A-Z a-z 0-9 _ . -)",
    defaultText: DEFAULT_NAME_SEPARATOR,
  },
  {
    flags: '--priority <names>',
    help: 'Members (workload names) in priority order, comma-separated, for --naming priority; the others follow by name',
  },
  {
    flags: '--naming-config <file>',
    help: 'YAML or JSON file with the overrides of --naming manual: overrides: {<member>: {tools: {<tool>: {name: <new>} | {hidden: true}}, prompts: ...}}',
  },
] as const;

/** How a run flag reads in this command's help. */
function describe(row: RunFlagSpec): RunFlagSpec {
  if (row.long === 'name')
    return { ...row, defaultText: '<group>-aggregate', help: 'Name of the aggregate workload' };
  if (row.long === 'group') {
    const { default: _default, ...rest } = row;
    return { ...rest, defaultText: 'the group served', help: 'Group the aggregate workload belongs to' };
  }
  if (row.long === 'foreground') return { ...row, help: 'Block until the aggregate stops' };
  return row;
}

export function createGroupServeCommand(): Command {
  const cmd = new RunFlagsCommand('serve')
    .description(
      "Serve a group's workloads as one MCP endpoint: a workload (default name <group>-aggregate) whose proxy applies the policies given here",
    )
    .usage('[flags] <group>')
    .argument('<group>', 'The group to serve (its workloads of every kind; aggregates excluded)')
    .addHelpText(
      'after',
      `
Examples:
  moat group serve tools
  moat group serve tools --naming priority --priority time,fetch --proxy-port 8090
  moat group serve tools --naming manual --naming-config naming.yaml --oidc-issuer https://idp.example.com
`,
    );
  for (const row of SERVE_FLAGS) {
    const option = new Option(row.flags, row.help).helpGroup('Aggregation:');
    if ('choices' in row) option.choices(row.choices);
    if ('default' in row) option.default(row.default);
    if ('defaultText' in row) option.default(undefined, row.defaultText);
    cmd.addOption(option);
  }
  return addRunFlags(cmd, { hidden: new Set(AGGREGATE_REFUSED), describe });
}

export function groupServeCommand(io: CliIO): Command {
  const cmd = createGroupServeCommand();
  return cmd.action(async (group: string) =>
    (await import('./group-serve-action.js')).serveAction(cmd, group, io),
  );
}
