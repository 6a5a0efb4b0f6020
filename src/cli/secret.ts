/**
 * `moat secret set|get|list|delete`: the user's secrets in the configured provider. Values are
 * never taken from the command line (where `ps` and shell history would see them): `set` reads
 * stdin, or asks without echo on a terminal. `get` prints the value only to a terminal, or to a
 * pipe/file when --reveal says so explicitly.
 */
import { Command } from 'commander';
import { openSecretsProvider, userSecrets, type SecretsProvider } from '../secrets/index.js';
import { isInteractive, promptHidden } from '../secrets/prompt.js';
import { runtimeError, usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';

export interface SecretCommandOptions {
  stdin?: NodeJS.ReadableStream;
  env?: NodeJS.ProcessEnv;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

function isTerminal(stream: NodeJS.WritableStream): boolean {
  return Boolean((stream as NodeJS.WriteStream).isTTY);
}

export function secretCommand(io: CliIO, options: SecretCommandOptions = {}): Command {
  const stdin = options.stdin ?? process.stdin;
  const open = async (): Promise<SecretsProvider> =>
    userSecrets(
      await openSecretsProvider({ env: options.env ?? process.env, input: stdin, output: io.stderr }),
    );

  // Set before the subcommands are created, which copy these settings (addCommand does not pass them on).
  const command = new Command('secret')
    .description(
      'Manage secrets (provider from MOAT_SECRETS_PROVIDER or config.yaml: encrypted, environment, none)',
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  command
    .command('set')
    .description('Store a secret; the value is read from stdin, or asked for without echo on a terminal')
    .argument('<name>', 'secret name (letters, digits, _ . -)')
    .action(async (name: string) => {
      const secrets = await open();
      let value: string;
      if (isInteractive(stdin)) value = await promptHidden(`Value for ${name}: `, stdin, io.stderr);
      else value = (await readAll(stdin)).replace(/\r?\n$/, '');
      if (value === '')
        throw usageError(
          `no value for secret ${name}: pipe it on stdin (values are never taken from arguments)`,
        );
      await secrets.set(name, value);
      io.stderr.write(`Secret ${name} stored in the ${secrets.kind} provider\n`);
    });

  command
    .command('get')
    .description('Print a secret value (to a terminal; to a pipe or file only with --reveal)')
    .argument('<name>', 'secret name')
    .option('--reveal', 'print the value even when stdout is not a terminal', false)
    .action(async (name: string, opts: { reveal: boolean }) => {
      if (!opts.reveal && !isTerminal(io.stdout)) {
        throw usageError('moat secret get prints a value to a pipe or file only with --reveal');
      }
      const value = await (await open()).get(name);
      if (value === undefined) throw runtimeError(`secret ${name} not found`);
      io.stdout.write(`${value}\n`);
    });

  command
    .command('list')
    .description('List secret names (never values)')
    .action(async () => {
      for (const name of await (await open()).list()) io.stdout.write(`${name}\n`);
    });

  command
    .command('delete')
    .description('Delete a secret')
    .argument('<name>', 'secret name')
    .action(async (name: string) => {
      if (!(await (await open()).delete(name))) throw runtimeError(`secret ${name} not found`);
      io.stderr.write(`Secret ${name} deleted\n`);
    });

  return command;
}
