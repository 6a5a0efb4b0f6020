/**
 * The commander definition of `moat run`, generated from the flag table, and the parse of its
 * argv into typed flags, the target and the server arguments (everything after the first `--`).
 */
import { Command, CommanderError, InvalidArgumentError, Option, type ParseOptionsResult } from 'commander';
import type { AggregateConfig } from '../config/aggregate.js';
import type { PermissionProfile } from '../config/runconfig.js';
import type { ImageProvenance } from '../runtime/verify/provenance.js';
import { parseDuration } from '../util/duration.js';
import { usageError } from '../util/errors.js';
import { SECTIONS, type RunFlagSpec } from './run-flag-spec.js';
import { attributeName, defaultRunFlags, type RunFlagName, type RunFlags } from './run-flag-values.js';
import { RUN_FLAGS } from './run-flags.js';

const ROWS: readonly RunFlagSpec[] = RUN_FLAGS;

export interface ParsedRun {
  flags: RunFlags;
  /** Flags the user set on the command line (long names), as opposed to defaults. */
  explicit: ReadonlySet<RunFlagName>;
  /** The positional target (absent with --from-config). */
  target?: string;
  /** Arguments after the first `--`, passed to the server verbatim. */
  serverArgs: string[];
  /** Set when the target was a registry name (run-registry.ts): the entry and its defaults. */
  registry?: RegistryDefaults;
  /** `moat group serve`: the group served as one endpoint, instead of a target. */
  aggregate?: AggregateConfig;
}

export interface RegistryDefaults {
  server: string;
  /** The entry's permission profile, the default when --permission-profile is absent. */
  permissions?: 'none' | 'network' | PermissionProfile;
  /** The image's provenance from the entry, checked by --image-verification. */
  provenance?: ImageProvenance;
}

/** Go's strconv.ParseBool spellings, so `--x=false`, `--x=0`, `--x=FALSE` all work. */
const BOOL_VALUES: Record<string, boolean> = {
  '1': true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

const BOOL_FLAGS = new Set(ROWS.filter((r) => r.type === 'bool' && r.long !== 'help').map((r) => r.long));
const VALUE_FLAGS = new Set(
  ROWS.filter((r) => r.type !== 'bool').flatMap((r) => [`--${r.long}`, ...(r.short ? [`-${r.short}`] : [])]),
);

/**
 * Rewrites `--flag=true|false` of boolean flags into `--flag` / `--no-flag` (the hidden
 * negations commander understands). Values of value-taking options and everything after `--`
 * are left alone.
 */
export function normalizeBoolAssignments(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (VALUE_FLAGS.has(arg)) {
      out.push(arg, ...args.slice(i + 1, i + 2));
      i++;
      continue;
    }
    const match = /^--([a-z0-9-]+)=(.*)$/s.exec(arg);
    if (match && BOOL_FLAGS.has(match[1] as string)) {
      const [, name, text] = match as unknown as [string, string, string];
      const value = BOOL_VALUES[text];
      if (value === undefined) {
        throw usageError(`--${name} takes true or false, got ${JSON.stringify(text)}`);
      }
      out.push(value ? `--${name}` : `--no-${name}`);
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** A command with the run flags (`moat run`, `moat group serve`): parses `--flag=value` booleans first. */
export class RunFlagsCommand extends Command {
  override parseOptions(argv: string[]): ParseOptionsResult {
    return super.parseOptions(normalizeBoolAssignments(argv));
  }
}

function invalid(message: string): never {
  throw new InvalidArgumentError(message);
}

function rangeText(row: RunFlagSpec): string {
  if (row.max !== undefined) return ` from ${row.min ?? 0} to ${row.max}`;
  return row.min !== undefined ? ` of at least ${row.min}` : '';
}

function checkRange(row: RunFlagSpec, n: number, what: string): number {
  if ((row.min !== undefined && n < row.min) || (row.max !== undefined && n > row.max)) {
    invalid(`expected ${what}${rangeText(row)}`);
  }
  return n;
}

function nonEmpty(value: string): string {
  if (value === '') invalid('expected a non-empty value');
  return value;
}

function appendCommaSeparated(value: string, previous: unknown): string[] {
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) invalid('expected a comma-separated list without empty items');
  return [...((previous as string[] | undefined) ?? []), ...items];
}

/** commander's value parser for a row's type; lists accumulate across repeats. */
function valueParser(row: RunFlagSpec): ((value: string, previous: unknown) => unknown) | undefined {
  switch (row.type) {
    case 'string':
      return row.choices ? undefined : nonEmpty;
    case 'stringArray':
      if (row.commaSeparated) return appendCommaSeparated;
      return (value, previous) => [...((previous as string[] | undefined) ?? []), nonEmpty(value)];
    case 'strings':
      return appendCommaSeparated;
    case 'int':
      return (value) => {
        if (!/^-?\d+$/.test(value.trim())) invalid(`expected an integer${rangeText(row)}`);
        return checkRange(row, Number(value), 'an integer');
      };
    case 'float':
      return (value) => {
        const n = value.trim() === '' ? NaN : Number(value);
        if (!Number.isFinite(n)) invalid(`expected a number${rangeText(row)}`);
        return checkRange(row, n, 'a number');
      };
    case 'duration':
      return (value) => {
        const ms = parseDuration(value);
        if (ms === undefined) invalid('expected a duration such as 30s, 1m or 2m30s');
        return ms;
      };
    case 'bool':
      return undefined;
  }
}

function optionFor(row: RunFlagSpec): Option[] {
  const short = row.short ? `-${row.short}, ` : '';
  const takesValue = row.type !== 'bool';
  const showDefaultInline = row.defaultText !== undefined && row.default === undefined;
  const help = showDefaultInline ? `${row.help} (default: ${row.defaultText})` : row.help;
  const option = new Option(`${short}--${row.long}${takesValue ? ` ${row.value}` : ''}`, help).helpGroup(
    `${SECTIONS[row.section]}:`,
  );
  if (row.choices) option.choices(row.choices);
  const parser = valueParser(row);
  if (parser) option.argParser(parser);
  if (row.default !== undefined) option.default(row.default, row.defaultText);
  if (!takesValue) return [option, new Option(`--no-${row.long}`).hideHelp()];
  return [option];
}

const EXAMPLES = `
Examples:
  moat run fetch
  moat run time -- --local-timezone Europe/Paris
  moat run ghcr.io/acme/mcp-server:1.2 --proxy-port 8080
  moat run --transport stdio -e LOG_LEVEL=debug ghcr.io/acme/stdio-server:1 -- --verbose
  moat run https://mcp.example.com/mcp --name example
  moat run --from-config exported.json --foreground
`;

/** The `run` command with every flag of the table; the caller adds the action. */
export function createRunCommand(): Command {
  const cmd = new RunFlagsCommand('run')
    .description(
      'Run an MCP server (a registry name, a container image, an npx://, uvx:// or go:// package, or a remote URL) behind the moat proxy',
    )
    .usage('[flags] SERVER_OR_IMAGE_OR_PACKAGE_OR_URL [-- ARGS...]')
    .argument(
      '[target]',
      'registry server name (moat registry list), image reference, npx:// uvx:// go:// package, or http(s) URL of a remote MCP server',
    )
    .allowExcessArguments(true)
    .addHelpText('after', EXAMPLES);
  return addRunFlags(cmd, { withHelp: true });
}

export interface RunFlagsUse {
  /** Rows parsed but left out of help (flags that do not apply there, refused with a clear error). */
  hidden?: ReadonlySet<string>;
  /** How a row reads in this command's help (another default, say). */
  describe?: (row: RunFlagSpec) => RunFlagSpec;
  /** The table's `--help` row, in its place (otherwise the command's own help option stays). */
  withHelp?: boolean;
}

/** Adds the flags of the table to `cmd`; readRunFlags reads them back. */
export function addRunFlags<C extends Command>(cmd: C, use: RunFlagsUse = {}): C {
  for (const row of ROWS) {
    if (row.long === 'help') {
      if (use.withHelp)
        cmd.addHelpOption(new Option(`-h, --help`, row.help).helpGroup(`${SECTIONS[row.section]}:`));
      continue;
    }
    for (const option of optionFor(use.describe?.(row) ?? row)) {
      cmd.addOption(use.hidden?.has(row.long) ? option.hideHelp() : option);
    }
  }
  return cmd;
}

/** The run flags of a parsed command (addRunFlags), with the ones set on the command line. */
export function readRunFlags(cmd: Command): Pick<ParsedRun, 'flags' | 'explicit'> {
  const opts = cmd.opts();
  const flags: Record<string, unknown> = { ...defaultRunFlags() };
  const explicit = new Set<RunFlagName>();
  for (const row of RUN_FLAGS) {
    const key = attributeName(row.long);
    if (opts[key] !== undefined) flags[key] = opts[key];
    if (cmd.getOptionValueSource(key) === 'cli') explicit.add(row.long);
  }
  return { flags: flags as RunFlags, explicit };
}

/** The arguments after the first literal `--` of the raw command line. */
export function argsAfterDoubleDash(rawArgs: readonly string[]): string[] {
  const index = rawArgs.indexOf('--');
  return index < 0 ? [] : rawArgs.slice(index + 1);
}

/**
 * Reads the parse result of the run command. `rawArgs` is the command line as typed (from the
 * program root), needed because commander folds the arguments after `--` into its operands.
 */
export function readParsedRun(cmd: Command, rawArgs: readonly string[]): ParsedRun {
  const { flags, explicit } = readRunFlags(cmd);
  const serverArgs = argsAfterDoubleDash(rawArgs);
  const operands = cmd.args;
  const before = operands.slice(0, operands.length - serverArgs.length);
  const tail = operands.slice(operands.length - serverArgs.length);
  if (tail.length !== serverArgs.length || tail.some((arg, i) => arg !== serverArgs[i])) {
    throw usageError(
      'could not tell the server arguments apart: put them after one -- at the end of the command',
    );
  }
  if (before.length > 1) {
    throw usageError(
      `run takes one target, got ${before.length}: ${before.join(' ')}; ` +
        'put arguments for the server after --, e.g. moat run IMAGE -- --port 8080',
    );
  }
  return { flags, explicit, ...(before[0] ? { target: before[0] } : {}), serverArgs };
}

/**
 * Parses the arguments of `moat run` (without the word `run`) on a command of its own: the pure
 * entry point for tests and tools. Usage errors are thrown as MoatErrors (exit code 2).
 */
export function parseRunArgv(argv: readonly string[]): ParsedRun {
  const cmd = createRunCommand()
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw usageError(err.message.replace(/^error: /, ''));
    throw err;
  }
  return readParsedRun(cmd, argv);
}
