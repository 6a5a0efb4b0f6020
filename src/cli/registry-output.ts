/**
 * How `moat registry` and `moat search` show servers: a table (or JSON) of servers, and one
 * server's details. Loaded by their actions only: it brings the registry (catalog, schema, HTTP
 * client), which `moat --help` and the other commands do without.
 */
import {
  closestNames,
  findServer,
  planFor,
  moatSettings,
  shortName,
  type DeclaredInput,
  type RegistryServer,
} from '../registry/index.js';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import type { OutputFormat } from './registry.js';

/** One line per server: short name, how it runs, description. */
export function writeServerTable(servers: readonly RegistryServer[], format: OutputFormat, io: CliIO): void {
  if (format === 'json') {
    io.stdout.write(`${JSON.stringify({ servers }, null, 2)}\n`);
    return;
  }
  const rows = servers.map((s) => [shortName(s.name), s.name, runsAs(s), s.description]);
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

export function writeInfo(server: RegistryServer, io: CliIO): void {
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

/** The server a name means, or a usage error with the closest names. */
export function requireServer(servers: readonly RegistryServer[], name: string): RegistryServer {
  const server = findServer(servers, name);
  if (server) return server;
  const close = closestNames(servers, name);
  throw usageError(
    `no server ${JSON.stringify(name)} in the registry` +
      (close.length > 0
        ? `; did you mean ${close.join(', ')}?`
        : '; see moat registry list or moat search <term>'),
  );
}
