/**
 * `moat config set-registry <path|url>`, `get-registry`, `unset-registry`: the user's registry,
 * stored in config.yaml in Moat's config directory. Its entries override the built-in catalog's
 * entries of the same name. It is read once when set, so a wrong path, URL or document is
 * reported now rather than at the next `moat run`; a URL is detected as an MCP Registry API or
 * a registry file, and the kind is stored with it.
 */
import { Command } from 'commander';
import type { CliIO } from '../util/io.js';
import { registry } from './registry.js';

export function configCommand(io: CliIO): Command {
  const command = new Command('config').description("Moat's settings (config.yaml in the config directory)");
  command
    .command('set-registry')
    .description(
      'Use a registry file, a registry file at an HTTP(S) URL or an MCP Registry API; its servers override the built-in catalog of the same name',
    )
    .argument(
      '<path|url>',
      'a JSON file of server.json entries, an http(s) URL serving one, or an API base URL',
    )
    .option('--allow-private-ip', 'allow a registry URL on a private or loopback address', false)
    .action(async (location: string, opts: { allowPrivateIp: boolean }) => {
      const { detectRegistryKind, isUrl, saveRegistry } = await registry();
      const { source, servers } = await detectRegistryKind(location, opts.allowPrivateIp);
      await saveRegistry(source);
      const kind =
        source.kind === 'api'
          ? 'an MCP Registry API'
          : `a registry file${isUrl(source.location) ? ' at a URL' : ''}, ${servers} servers`;
      io.stderr.write(`Registry set to ${source.location} (${kind})\n`);
    });
  command
    .command('get-registry')
    .description('Print the configured registry (or say that only the built-in catalog is used)')
    .action(async () => {
      const source = await (await registry()).configuredRegistry();
      if (!source) {
        io.stdout.write('built-in catalog only (no registry set)\n');
        return;
      }
      const notes = [
        ...(source.kind === 'api' ? ['MCP Registry API'] : []),
        ...(source.allowPrivateIp ? ['private addresses allowed'] : []),
      ];
      io.stdout.write(`${source.location}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}\n`);
    });
  command
    .command('unset-registry')
    .description('Stop using the registry; only the built-in catalog remains')
    .action(async () => {
      await (await registry()).saveRegistry(undefined);
      io.stderr.write('Registry unset; using the built-in catalog only\n');
    });
  return command;
}
