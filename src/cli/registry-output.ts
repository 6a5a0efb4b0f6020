/**
 * How `moat registry` and `moat search` show servers: a table (or JSON) of servers, and one
 * server's details. Loaded by their actions only: it brings the registry (catalog, schema, HTTP
 * client), which `moat --help` and the other commands do without.
 */
import {
  closestNames,
  planFor,
  moatSettings,
  shortName,
  splitVersion,
  type DeclaredInput,
  type Registry,
  type RegistryEntry,
  type RegistryServer,
} from '../registry/index.js';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';

/** One line per server: short name, how it runs, description (a deprecated one says so). */
/** How `moat registry` and `moat search` print: a table for people, or JSON for scripts. */
export type OutputFormat = 'text' | 'json';

export function writeServerTable(entries: readonly RegistryEntry[], format: OutputFormat, io: CliIO): void {
  if (format === 'json') {
    io.stdout.write(`${JSON.stringify({ servers: entries.map((e) => e.server) }, null, 2)}\n`);
    return;
  }
  const rows = entries.map(({ server: s, status }) => [
    shortName(s.name),
    s.name,
    runsAs(s),
    `${status === 'active' ? '' : `[${status}] `}${s.description}`,
  ]);
  const header = ['NAME', 'FULL NAME', 'RUNS', 'DESCRIPTION'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  for (const row of [header, ...rows]) {
    const cells = row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i] as number) : cell));
    io.stdout.write(`${cells.join('  ')}\n`);
  }
}

function runsAs(server: RegistryServer): string {
  try {
    const plan = planFor(server);
    return plan.kind === 'package' ? (plan.target.split('://')[0] as string) : plan.kind;
  } catch {
    return '(not runnable)';
  }
}

function describeInput(input: DeclaredInput): string {
  const marks = [input.required ? 'required' : 'optional', ...(input.secret ? ['secret'] : [])];
  const value = input.value !== undefined && !input.secret ? ` = ${input.value}` : '';
  return `  ${input.name}${value} (${marks.join(', ')})${input.description ? `: ${input.description}` : ''}`;
}

export function writeInfo(entry: RegistryEntry, io: CliIO): void {
  const { server } = entry;
  const plan = planFor(server);
  const settings = moatSettings(server);
  const permissions =
    typeof plan.permissions === 'object'
      ? 'custom (from the registry entry)'
      : (plan.permissions ?? 'network (default)');
  const lines = [
    `Name:        ${server.name}`,
    ...(server.title ? [`Title:       ${server.title}`] : []),
    `Description: ${server.description}`,
    ...(server.version ? [`Version:     ${server.version}`] : []),
    ...(entry.status !== 'active'
      ? [`Status:      ${entry.status}${entry.statusMessage ? ` (${entry.statusMessage})` : ''}`]
      : []),
    ...(server.repository?.url ? [`Repository:  ${server.repository.url}`] : []),
    `Runs:        ${plan.target}`,
    `Transport:   ${plan.transport}`,
    ...(plan.kind === 'remote' ? [] : [`Permissions: ${permissions}`]),
    ...(settings.tags?.length ? [`Tags:        ${settings.tags.join(', ')}`] : []),
    ...(plan.args.length > 0 ? [`Arguments:   ${plan.args.join(' ')}`] : []),
    ...(plan.missingArgs.length > 0
      ? [`Needs:       ${plan.missingArgs.join(', ')} (give them after --)`]
      : []),
    ...(plan.env.length > 0 ? ['Environment:', ...plan.env.map(describeInput)] : []),
    ...(plan.headers.length > 0 ? ['Headers:', ...plan.headers.map(describeInput)] : []),
    ...(plan.variables.length > 0 ? ['Variables:', ...plan.variables.map(describeInput)] : []),
    ...(plan.provenance
      ? [
          `Provenance:  ${Object.entries(plan.provenance)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}`,
        ]
      : []),
    '',
    `Run it:      moat run ${shortName(server.name)}`,
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
}

/** The entry a `name[@version]` means, or a usage error with the closest names. */
export async function requireEntry(registry: Registry, typed: string): Promise<RegistryEntry> {
  const { name, version } = splitVersion(typed);
  const entry = await registry.find(name, version);
  if (entry) return entry;
  const close = closestNames(registry.known(), name);
  throw usageError(
    `no server ${JSON.stringify(name)} in the registry` +
      (close.length > 0
        ? `; did you mean ${close.join(', ')}?`
        : '; see moat registry list or moat search <term>'),
  );
}
