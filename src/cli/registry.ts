/**
 * `moat registry list` and `moat registry info <name>`: the servers `moat run <name>` knows
 * (the built-in catalog, overridden by the user's registry), as text or JSON.
 */
import { Command, Option } from 'commander';
import type { CliIO } from '../util/io.js';

export type OutputFormat = 'text' | 'json';

export function formatOption(): Option {
  return new Option('--format <format>', 'output format').choices(['text', 'json']).default('text');
}

/**
 * The registry and the output helpers are loaded by the actions: `moat --help` builds every
 * command, and the registry brings its catalog, schema and HTTP client (docs/performance.md).
 */
export const registry = () => import('../registry/index.js');
export const registryOutput = () => import('./registry-output.js');

export function registryCommand(io: CliIO): Command {
  const command = new Command('registry').description(
    'Servers you can run by name: the built-in catalog and your registry (moat config set-registry)',
  );
  command
    .command('list')
    .description('List the servers of the registry')
    .addOption(formatOption())
    .action(async (opts: { format: OutputFormat }) => {
      const [{ loadServers }, { writeServerTable }] = await Promise.all([registry(), registryOutput()]);
      writeServerTable((await loadServers()).servers, opts.format, io);
    });
  command
    .command('info')
    .description('Show a server: what it runs, its transport, permissions, environment and headers')
    .argument('<name>', 'short name (fetch) or full name (io.github.modelcontextprotocol/fetch)')
    .addOption(formatOption())
    .action(async (name: string, opts: { format: OutputFormat }) => {
      const [{ loadServers }, { requireServer, writeInfo }] = await Promise.all([
        registry(),
        registryOutput(),
      ]);
      const server = requireServer((await loadServers()).servers, name);
      if (opts.format === 'json') io.stdout.write(`${JSON.stringify(server, null, 2)}\n`);
      else writeInfo(server, io);
    });
  return command;
}
