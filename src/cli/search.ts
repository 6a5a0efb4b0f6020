/**
 * `moat search <term>`: registry servers whose name, title, description or tags contain the term
 * (a registry API is searched as the API searches: by name).
 */
import { Command } from 'commander';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { formatOption, openForListing, registryOutput } from './registry.js';
import type { OutputFormat } from './registry-output.js';

export function searchCommand(io: CliIO): Command {
  return new Command('search')
    .description('Search the registry by name, description and tags')
    .argument('<term>', 'text to look for (case-insensitive)')
    .addOption(formatOption())
    .action(async (term: string, opts: { format: OutputFormat }) => {
      if (term.trim() === '') throw usageError('search needs a non-empty term');
      const [open, { writeServerTable }] = await Promise.all([openForListing(io), registryOutput()]);
      const found = await open.search(term.trim());
      if (found.length === 0 && opts.format === 'text') {
        io.stderr.write(`No server matches ${JSON.stringify(term)}; see moat registry list\n`);
        return;
      }
      writeServerTable(found, opts.format, io);
    });
}
