/**
 * `moat config set-registry <path|url>`, `get-registry`, `unset-registry`: the user's registry,
 * stored in config.yaml in Moat's config directory. Its entries override the built-in catalog's
 * entries of the same name. It is loaded once when set, so a wrong path, URL or document is
 * reported now rather than at the next `moat run`.
 */
import { resolve } from 'node:path';
import { Command } from 'commander';
import type { RegistrySource } from '../registry/index.js';
import type { CliIO } from '../util/io.js';
import { registry } from './registry.js';

export function configCommand(io: CliIO): Command {
  const command = new Command('config').description("Moat's settings (config.yaml in the config directory)");
  command
    .command('set-registry')
    .description(
      'Use a registry file or HTTP(S) URL; its servers override the built-in catalog of the same name',
    )
    .argument('<path|url>', 'a JSON file of server.json entries, or an http(s) URL serving one')
    .option('--allow-private-ip', 'allow a registry URL on a private or loopback address', false)
    .action(async (location: string, opts: { allowPrivateIp: boolean }) => {
      const { checkRegistryUrl, isUrl, loadRegistry, saveRegistry } = await registry();
      const source: RegistrySource = {
        location: isUrl(location) ? location : resolve(location),
        allowPrivateIp: opts.allowPrivateIp,
      };
      if (isUrl(location)) checkRegistryUrl(location, opts.allowPrivateIp);
      const servers = await loadRegistry(source);
      await saveRegistry(source);
      io.stderr.write(`Registry set to ${source.location} (${servers.length} servers)\n`);
    });
  command
    .command('get-registry')
    .description('Print the configured registry (or say that only the built-in catalog is used)')
    .action(async () => {
      const source = await (await registry()).configuredRegistry();
      if (!source) io.stdout.write('built-in catalog only (no registry set)\n');
      else
        io.stdout.write(`${source.location}${source.allowPrivateIp ? ' (private addresses allowed)' : ''}\n`);
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
