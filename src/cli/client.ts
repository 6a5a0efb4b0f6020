/**
 * `moat client list|setup|register|remove|status`: point AI clients (Claude Code, Cursor, VS
 * Code, Codex, ...) at the workloads of a group. A registered client's file then follows the
 * group (see src/clients/sync.ts); docs/clients.md has the table of clients and files. The
 * parsers and the sync load when a subcommand runs, not for `moat --help`.
 */
import { createInterface } from 'node:readline/promises';
import { Command, Option } from 'commander';
import { DEFAULTS } from '../config/defaults.js';
import { CLIENT_IDS, CLIENTS, findClient } from '../clients/table.js';
import { currentClientEnv } from '../clients/platform.js';
import type { ClientSpec } from '../clients/types.js';
import type { ClientSyncResult } from '../clients/index.js';
import { errorMessage, runtimeError, usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { assertValidName } from '../workloads/names.js';
import { WorkloadStore } from '../workloads/store.js';
import { reportSync } from './client-sync.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function clientsNamed(ids: readonly string[]): ClientSpec[] {
  if (ids.length === 0) throw usageError(`name at least one client (${CLIENT_IDS.join(', ')})`);
  return [...new Set(ids)].map((id) => {
    const client = findClient(id);
    if (!client) throw usageError(`unknown client "${id}"; supported: ${CLIENT_IDS.join(', ')}`);
    return client;
  });
}

async function existingGroup(store: WorkloadStore, group: string): Promise<string> {
  assertValidName(group, 'group name (--group)');
  if (group === DEFAULTS.group) await store.createGroup(group);
  else if (!(await store.readGroup(group)))
    throw usageError(`group "${group}" does not exist; create it with "moat group create ${group}"`);
  return group;
}

function checkTokenEnv(tokenEnv: string | undefined, clients: readonly ClientSpec[]): void {
  if (tokenEnv === undefined) return;
  if (!ENV_NAME.test(tokenEnv))
    throw usageError(`--token-env must name an environment variable (letters, digits, _), got "${tokenEnv}"`);
  const cannot = clients.filter((c) => !c.envReference).map((c) => c.id);
  if (cannot.length > 0)
    throw usageError(
      `--token-env: ${cannot.join(', ')} cannot read a header from an environment variable (docs/clients.md)`,
    );
}

interface RegisterOptions {
  group: string;
  tokenEnv?: string;
}

/** Checks every file first (nothing is registered when one is unusable), then registers and syncs. */
async function register(io: CliIO, clients: readonly ClientSpec[], opts: RegisterOptions): Promise<void> {
  const { checkClientFile, syncClients } = await import('../clients/index.js');
  const store = new WorkloadStore();
  const group = await existingGroup(store, opts.group);
  checkTokenEnv(opts.tokenEnv, clients);
  const env = currentClientEnv();
  for (const client of clients) await checkClientFile(client, client.file(env));
  await store.updateGroup(group, (record) => ({
    ...record,
    registered_clients: [...new Set([...record.registered_clients, ...clients.map((c) => c.id)])].sort(),
  }));
  const tokenEnv = new Map(opts.tokenEnv ? clients.map((c) => [c.id, opts.tokenEnv as string]) : []);
  const results = await syncClients(store, { only: clients, tokenEnv });
  for (const client of clients) io.stdout.write(`Registered ${client.title} with group ${group}\n`);
  finishSync(results, io);
}

/** Reports a sync; a client left untouched makes the command fail (exit 1) after the others were done. */
function finishSync(results: readonly ClientSyncResult[], io: CliIO): void {
  reportSync(results, io);
  const failed = results.filter((r) => r.problem);
  if (failed.length > 0) throw runtimeError(`not updated: ${failed.map((r) => r.client.id).join(', ')}`);
}

export function clientCommand(io: CliIO): Command {
  const command = new Command('client').description(
    "Configure AI clients (Claude Code, Cursor, VS Code, Codex, ...) to use a group's workloads",
  );
  const formatOption = () =>
    new Option('--format <format>', 'Output format').choices(['text', 'json']).default('text');

  command
    .command('list')
    .alias('ls')
    .description('Every supported client: installed or not, its config file, what Moat manages there')
    .addOption(formatOption())
    .action(async (opts: { format: 'text' | 'json' }) => {
      const { isInstalled, readLedger } = await import('../clients/index.js');
      const env = currentClientEnv();
      const rows = await Promise.all(
        CLIENTS.map(async (c) => ({
          client: c.id,
          title: c.title,
          installed: await isInstalled(c, env),
          file: c.file(env),
          format: c.format,
          managed: Object.keys((await readLedger(c.id)).entries),
        })),
      );
      if (opts.format === 'json') return void io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      io.stdout.write(
        table(
          ['CLIENT', 'INSTALLED', 'FORMAT', 'FILE', 'MOAT ENTRIES'],
          rows.map((r) => [
            r.client,
            r.installed ? 'yes' : 'no',
            r.format,
            r.file,
            r.managed.join(',') || '-',
          ]),
        ),
      );
    });

  command
    .command('register')
    .description('Register clients with a group: their files get an entry per running workload of it')
    .argument('<clients...>', `Clients (${CLIENT_IDS.join(', ')})`)
    .option('-g, --group <group>', 'The group whose workloads the clients use', DEFAULTS.group)
    .option(
      '--token-env <name>',
      'For OIDC workloads: send "Authorization: Bearer $<name>" (the client reads the variable)',
    )
    .action(async (ids: string[], opts: RegisterOptions) => register(io, clientsNamed(ids), opts));

  command
    .command('remove')
    .alias('rm')
    .description(
      "Unregister clients (from --group, or from every group) and remove Moat's entries from their files",
    )
    .argument('<clients...>', 'Clients')
    .option('-g, --group <group>', 'Only from this group')
    .action(async (ids: string[], opts: { group?: string }) => {
      const { registrations, syncClients } = await import('../clients/index.js');
      const clients = clientsNamed(ids);
      const store = new WorkloadStore();
      const groups = opts.group ? [await existingGroup(store, opts.group)] : await store.groupNames();
      const removing = new Set(clients.map((c) => c.id));
      for (const group of groups) {
        await store.updateGroup(group, (record) => ({
          ...record,
          registered_clients: record.registered_clients.filter((id) => !removing.has(id)),
        }));
      }
      const stillRegistered = await registrations(store);
      // Unregistered everywhere: the token variable is forgotten too.
      const tokenEnv = new Map(clients.filter((c) => !stillRegistered.has(c.id)).map((c) => [c.id, null]));
      const results = await syncClients(store, { only: clients, tokenEnv });
      for (const client of clients)
        io.stdout.write(`Removed ${client.title}${opts.group ? ` from group ${opts.group}` : ''}\n`);
      finishSync(results, io);
    });

  command
    .command('status')
    .description('Registered clients: their groups, files, and the entries Moat manages there')
    .addOption(formatOption())
    .action(async (opts: { format: 'text' | 'json' }) => {
      const { currentEntries, readLedger, registrations } = await import('../clients/index.js');
      const registered = await registrations(new WorkloadStore());
      const env = currentClientEnv();
      const rows = [];
      for (const client of CLIENTS) {
        const ledger = await readLedger(client.id);
        const groups = registered.get(client.id) ?? [];
        if (groups.length === 0 && Object.keys(ledger.entries).length === 0) continue;
        const file = ledger.file ?? client.file(env);
        const present = await currentEntries(client, file).then(
          (entries) => ({ entries }),
          (err: unknown) => ({ problem: errorMessage(err) }),
        );
        const missing =
          'entries' in present ? Object.keys(ledger.entries).filter((n) => !present.entries.has(n)) : [];
        rows.push({
          client: client.id,
          groups,
          file,
          managed: Object.keys(ledger.entries),
          ...(ledger.token_env ? { token_env: ledger.token_env } : {}),
          state:
            'problem' in present
              ? present.problem
              : missing.length
                ? `missing: ${missing.join(',')}`
                : 'in sync',
        });
      }
      if (opts.format === 'json') return void io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      if (rows.length === 0)
        return void io.stdout.write('No clients registered ("moat client register <client>").\n');
      io.stdout.write(
        table(
          ['CLIENT', 'GROUPS', 'FILE', 'MOAT ENTRIES', 'STATE'],
          rows.map((r) => [r.client, r.groups.join(',') || '-', r.file, r.managed.join(',') || '-', r.state]),
        ),
      );
    });

  command
    .command('setup')
    .description('Register the clients found on this machine: asks which on a terminal, or takes --client')
    .option('-c, --client <clients>', 'Comma-separated clients to register (no questions asked)')
    .option('-g, --group <group>', 'The group whose workloads the clients use', DEFAULTS.group)
    .option('--token-env <name>', 'For OIDC workloads: the variable holding the bearer token')
    .action(async (opts: RegisterOptions & { client?: string }) => {
      const ids =
        opts.client !== undefined
          ? opts.client
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : await askClients(io);
      if (ids.length === 0) return void io.stdout.write('No clients chosen; nothing changed.\n');
      await register(io, clientsNamed(ids), opts);
    });
  return command;
}

/** On a terminal: the installed clients, numbered; the answer picks some (or all). */
async function askClients(io: CliIO): Promise<string[]> {
  const { isInstalled } = await import('../clients/index.js');
  if (!process.stdin.isTTY || !io.stdout.isTTY)
    throw usageError(
      'moat client setup asks on a terminal; elsewhere give --client <clients> (comma-separated)',
    );
  const env = currentClientEnv();
  const found: ClientSpec[] = [];
  for (const client of CLIENTS) if (await isInstalled(client, env)) found.push(client);
  if (found.length === 0) {
    io.stdout.write(`No supported client found on this machine (${CLIENT_IDS.join(', ')}).\n`);
    return [];
  }
  found.forEach((c, i) => io.stdout.write(`  ${i + 1}) ${c.title}  ${c.file(env)}\n`));
  const rl = createInterface({ input: process.stdin, output: io.stdout });
  try {
    const answer = (
      await rl.question('Register which clients? (numbers separated by commas, "all", or empty for none) ')
    ).trim();
    if (answer === '') return [];
    if (answer === 'all') return found.map((c) => c.id);
    return answer.split(',').map((part) => {
      const chosen = found[Number(part.trim()) - 1];
      if (!chosen) throw usageError(`"${part.trim()}" is not one of the numbers 1-${found.length}`);
      return chosen.id;
    });
  } finally {
    rl.close();
  }
}

function table(header: string[], rows: string[][]): string {
  const lines = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  return `${lines
    .map((l) =>
      l
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('   ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
