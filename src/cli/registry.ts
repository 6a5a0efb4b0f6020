/**
 * `moat registry list`, `moat registry info <name>` and `moat registry serve`: the servers
 * `moat run <name>` knows (the built-in catalog, overridden by the user's registry), as text or
 * JSON, and the MCP Registry API over them for a team.
 */
import { Command, Option } from 'commander';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { warnUser } from '../util/log.js';
import type { OutputFormat } from './registry-output.js';

export function formatOption(): Option {
  return new Option('--format <format>', 'output format').choices(['text', 'json']).default('text');
}

/**
 * The registry and the output helpers are loaded by the actions: `moat --help` builds every
 * command, and the registry brings its catalog, schema and HTTP client (docs/performance.md).
 */
export const registry = () => import('../registry/index.js');
export const registryOutput = () => import('./registry-output.js');

/** The registry as the listing commands read it: notices (offline copy, skipped entries) on stderr. */
export async function openForListing(io: CliIO) {
  return (await registry()).openRegistry({ warn: (line) => warnUser(line, io.stderr) });
}

export function registryCommand(io: CliIO): Command {
  const command = new Command('registry').description(
    'Servers you can run by name: the built-in catalog and your registry (moat config set-registry)',
  );
  command
    .command('list')
    .description('List the servers of the registry')
    .addOption(formatOption())
    .option('--updated-since <time>', 'only servers a registry API changed since this RFC 3339 time')
    .action(async (opts: { format: OutputFormat; updatedSince?: string }) => {
      if (opts.updatedSince !== undefined && Number.isNaN(Date.parse(opts.updatedSince))) {
        throw usageError(
          `--updated-since ${opts.updatedSince}: expected an RFC 3339 time, e.g. 2026-11-01T00:00:00Z`,
        );
      }
      const [open, { writeServerTable }] = await Promise.all([openForListing(io), registryOutput()]);
      const entries = await open.list(opts.updatedSince ? { updatedSince: opts.updatedSince } : {});
      writeServerTable(entries, opts.format, io);
    });
  command
    .command('info')
    .description('Show a server: what it runs, its transport, permissions, environment and headers')
    .argument(
      '<name>',
      'short name (fetch) or full name (io.github.modelcontextprotocol/fetch), with @version',
    )
    .addOption(formatOption())
    .action(async (typed: string, opts: { format: OutputFormat }) => {
      const [open, { requireEntry, writeInfo }] = await Promise.all([openForListing(io), registryOutput()]);
      const entry = await requireEntry(open, typed);
      if (opts.format === 'json') io.stdout.write(`${JSON.stringify(entry.server, null, 2)}\n`);
      else writeInfo(entry, io);
    });
  command
    .command('serve')
    .description(
      'Serve the MCP Registry API (read-only) over the built-in catalog and registry files, in the foreground',
    )
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: a free one)', '8080')
    .option(
      '--file <path>',
      'a registry file to serve over the catalog (repeatable; default: the configured registry when it is a file)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--token-file <path>', 'require Authorization: Bearer <the token in this file>')
    .action(async (opts: { host: string; port: string; file: string[]; tokenFile?: string }) => {
      const { serveRegistry } = await import('./registry-serve.js');
      await serveRegistry(opts, io);
    });
  return command;
}
