/**
 * The clients and groups pages' data, read with the APIs `moat client list|status` and `moat
 * group list` use: each supported AI client, whether it is installed, the groups it is registered
 * with and the workloads Moat wrote into its config file (checked against the file); each group
 * and its registered clients.
 */
import { DEFAULTS } from '../config/defaults.js';
import {
  CLIENTS,
  currentClientEnv,
  currentEntries,
  isInstalled,
  readLedger,
  registrations,
} from '../clients/index.js';
import { errorMessage } from '../util/errors.js';
import type { WorkloadStore } from '../workloads/store.js';
import type { ClientRow, GroupRow } from './shared.js';

export async function clientRows(store: WorkloadStore): Promise<ClientRow[]> {
  const registered = await registrations(store);
  const env = currentClientEnv();
  return Promise.all(
    CLIENTS.map(async (client): Promise<ClientRow> => {
      const ledger = await readLedger(client.id);
      const workloads = Object.keys(ledger.entries);
      const groups = registered.get(client.id) ?? [];
      const file = ledger.file ?? client.file(env);
      return {
        id: client.id,
        title: client.title,
        installed: await isInstalled(client, env),
        file,
        groups,
        workloads,
        state:
          groups.length === 0 && workloads.length === 0
            ? '-'
            : await currentEntries(client, file).then(
                (present) => {
                  const missing = workloads.filter((n) => !present.has(n));
                  return missing.length ? `missing: ${missing.join(', ')}` : 'in sync';
                },
                (err: unknown) => errorMessage(err),
              ),
      };
    }),
  );
}

export async function groupRows(store: WorkloadStore): Promise<GroupRow[]> {
  const names = new Set([DEFAULTS.group, ...(await store.groupNames())]);
  return Promise.all(
    [...names].sort().map(async (name) => ({
      name,
      clients: (await store.readGroup(name))?.registered_clients ?? [],
    })),
  );
}
