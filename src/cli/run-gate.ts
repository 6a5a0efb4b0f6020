/**
 * Rules that decide whether `moat run` may proceed before anything is built or started:
 * --from-config stands alone, and a flag (or a field of a loaded RunConfig) that selects a
 * feature not implemented yet fails loudly instead of being ignored.
 *
 * A flag selects its feature when the user sets it explicitly; setting a boolean to false never
 * selects anything (it asks for what moat does without the feature). A flag left at its default
 * never trips the gate.
 */
import type { RunConfig } from '../config/runconfig.js';
import { NS_PER_MS } from '../util/duration.js';
import { usageError } from '../util/errors.js';
import type { ParsedRun } from './run-command.js';
import {
  FEATURES,
  PENDING_FEATURES,
  RUN_FLAGS,
  attributeName,
  type FeatureId,
  type RunFlagName,
  type RunFlagSpec,
} from './run-flags.js';
import { detectTarget } from './run-target.js';

const ROWS: readonly RunFlagSpec[] = RUN_FLAGS;

/**
 * Flags allowed next to --from-config: how and where this run starts, not what the workload is.
 * ToolHive allows only --foreground and --debug; a name, port, host or group of one's own is what
 * a user re-running an exported file on another machine (or next to the original) needs.
 */
export const FROM_CONFIG_COMPANIONS: readonly RunFlagName[] = [
  'from-config',
  'foreground',
  'debug',
  'name',
  'proxy-port',
  'host',
  'group',
  'skip-remote-check',
];

/** --from-config replaces the target and every configuration flag. */
export function checkFromConfigAlone(parsed: ParsedRun): void {
  const others = [...parsed.explicit].filter((flag) => !FROM_CONFIG_COMPANIONS.includes(flag));
  if (others.length > 0) {
    throw usageError(
      `--from-config cannot be used with other configuration flags: ${others.map((f) => `--${f}`).join(' ')} ` +
        `(allowed with it: ${FROM_CONFIG_COMPANIONS.filter((f) => f !== 'from-config')
          .map((f) => `--${f}`)
          .join(', ')})`,
    );
  }
  if (parsed.target !== undefined) {
    throw usageError(`--from-config replaces the target; remove ${JSON.stringify(parsed.target)}`);
  }
  if (parsed.serverArgs.length > 0) {
    throw usageError(
      '--from-config cannot take server arguments after --; they come from the file (cmd_args)',
    );
  }
}

function featureText(feature: FeatureId): string {
  const { title, issue } = FEATURES[feature] as { title: string; issue: number | undefined };
  return issue === undefined ? title : `${title}, issue ${issue}`;
}

function notImplementedYet(items: string[]): Error {
  const list = items.join('; ');
  return usageError(
    items.length === 1
      ? `${list} is not implemented yet in this version of moat`
      : `not implemented yet in this version of moat: ${list}`,
  );
}

function selects(row: RunFlagSpec, value: unknown): boolean {
  if (value === false || value === undefined) return false;
  return row.featureValues === undefined || (typeof value === 'string' && row.featureValues.includes(value));
}

/** Throws when an explicitly set flag (or the target kind) selects a pending feature. */
export function gateFlags(parsed: ParsedRun, pending: ReadonlySet<FeatureId> = PENDING_FEATURES): void {
  const hits: string[] = [];
  const flags = parsed.flags as Record<string, unknown>;
  for (const row of ROWS) {
    if (
      row.feature === undefined ||
      !pending.has(row.feature) ||
      !parsed.explicit.has(row.long as RunFlagName)
    ) {
      continue;
    }
    if (!selects(row, flags[attributeName(row.long)])) continue;
    const value = row.featureValues ? ` ${flags[attributeName(row.long)] as string}` : '';
    hits.push(`--${row.long}${value} (${featureText(row.feature)})${row.hint ? `: ${row.hint}` : ''}`);
  }
  if (parsed.target !== undefined && pending.has('protocol-builds')) {
    const target = detectTarget(parsed.target);
    if (target.kind === 'protocol') hits.push(`target ${target.raw} (${featureText('protocol-builds')})`);
  }
  if (hits.length > 0) throw notImplementedYet(hits);
}

function valueAt(config: RunConfig, path: string): unknown {
  let value: unknown = config;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** How a flag's default looks in a RunConfig (fields at their default select nothing). */
function configDefault(row: RunFlagSpec): unknown {
  if (row.long === 'remote-auth-timeout') return (row.default as number) * NS_PER_MS;
  if (row.type === 'float') return String(row.default);
  return row.default;
}

/** Fields whose mere presence selects the feature (`audit_config: {}` means "audit with defaults"). */
const PRESENCE_FIELDS = new Set(['audit_config']);

function isEmpty(path: string, value: unknown): boolean {
  if (PRESENCE_FIELDS.has(path)) return false;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object' && value !== null) return Object.keys(value).length === 0;
  return false;
}

/** Fields of a loaded RunConfig that no flag fills but that select a pending feature. */
const CONFIG_ONLY_FIELDS: readonly { path: string; feature: FeatureId }[] = [
  { path: 'protocol_target', feature: 'protocol-builds' },
  { path: 'authz_config', feature: 'inbound-security' },
];

/** Throws when a loaded RunConfig (--from-config) sets a field of a pending feature. */
export function gateRunConfig(config: RunConfig, pending: ReadonlySet<FeatureId> = PENDING_FEATURES): void {
  const hits: string[] = [];
  for (const row of ROWS) {
    if (row.feature === undefined || !pending.has(row.feature)) continue;
    for (const path of row.runConfig) {
      const value = valueAt(config, path);
      if (value === undefined || value === null || isEmpty(path, value) || value === configDefault(row))
        continue;
      if (!selects(row, value)) continue;
      hits.push(`field ${path} (set by --${row.long}: ${featureText(row.feature)})`);
    }
  }
  for (const { path, feature } of CONFIG_ONLY_FIELDS) {
    const value = valueAt(config, path);
    if (pending.has(feature) && value !== undefined && value !== null && !isEmpty(path, value)) {
      hits.push(`field ${path} (${featureText(feature)})`);
    }
  }
  if (hits.length > 0) throw notImplementedYet(hits);
}
