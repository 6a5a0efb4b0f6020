/**
 * The shape of one row of the `moat run` flag table (run-flags.ts): what a flag is, how help
 * groups it, and which RunConfig fields it fills.
 */

export type FlagType = 'string' | 'stringArray' | 'strings' | 'int' | 'float' | 'duration' | 'bool';

/** Help sections, in the order and with the titles of spec §2.1. */
export const SECTIONS = {
  identity: 'Workload identity, process and transport',
  isolation: 'Isolation and permissions',
  build: 'Build-time options (protocol schemes)',
  proxy: 'HTTP proxy behavior',
  tools: 'Tools',
  policy: 'Audit, authorization and webhook files',
  oidc: 'Incoming-client OIDC validation',
  remoteAuth: 'Authentication to a remote MCP server',
  tokenExchange: 'Token exchange',
  telemetry: 'Telemetry',
} as const;
export type SectionId = keyof typeof SECTIONS;

export interface RunFlagSpec {
  /** Long name without the dashes. */
  readonly long: string;
  readonly short?: string;
  readonly type: FlagType;
  /** Placeholder shown in help for flags that take a value. */
  readonly value?: string;
  /** Parsed default (milliseconds for durations); absent means "not set". */
  readonly default?: boolean | number | string;
  /** How help shows the default when it is not the literal value. */
  readonly defaultText?: string;
  readonly choices?: readonly string[];
  /** A stringArray whose values are also split on commas (the spec's help says "comma-separated"). */
  readonly commaSeparated?: boolean;
  /** Inclusive range for int/float flags. */
  readonly min?: number;
  readonly max?: number;
  readonly help: string;
  readonly section: SectionId;
  /**
   * RunConfig field(s) the flag fills or decides (dotted paths); empty when it fills none. The
   * builder (run-build.ts and its run-build-*.ts parts) is the one place that maps flags to the
   * RunConfig; this column is its index the other way round (field → flag), for errors that name
   * a flag and for docs/cli.md.
   * run-build.test.ts checks that each flag changes exactly these fields.
   */
  readonly runConfig: readonly string[];
}
