/** `moat search <term>`: registry servers whose name, title, description or tags contain the term. */
import { Command } from 'commander';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { formatOption, registry, registryOutput, type OutputFormat } from './registry.js';

export function searchCommand(io: CliIO): Command {
  return new Command('search')
    .description('Search the registry by name, description and tags')
    .argument('<term>', 'text to look for (case-insensitive)')
    .addOption(formatOption())
    .action(async (term: string, opts: { format: OutputFormat }) => {
      if (term.trim() === '') throw usageError('search needs a non-empty term');
      const [{ loadServers, searchServers }, { writeServerTable }] = await Promise.all([
        registry(),
        registryOutput(),
      ]);
      const found = searchServers((await loadServers()).servers, term.trim());
      if (found.length === 0 && opts.format === 'text') {
        io.stderr.write(`No server matches ${JSON.stringify(term)}; see moat registry list\n`);
        return;
      }
      writeServerTable(found, opts.format, io);
    });
}
