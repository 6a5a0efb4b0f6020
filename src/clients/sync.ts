/**
 * Keeps registered clients in step with their groups: for each client, Moat's entries in its file
 * become exactly the endpoints of the groups it is registered with (an endpoint of a stopped or
 * removed workload goes, a new or moved one comes, a changed URL is rewritten). Called after every
 * change to workloads (see workloads/changes.ts) and by `moat client register|remove`.
 */
import { errorMessage } from '../util/errors.js';
import { readLedger, type Ledger } from './ledger.js';
import { groupEndpoints } from './endpoints.js';
import type { FileReport } from './client-file.js';
import { currentClientEnv } from './platform.js';
import { CLIENTS } from './table.js';
import type { ClientSpec, Endpoint, EntryAuth } from './types.js';
import type { WorkloadStore } from '../workloads/store.js';

/** Client id → the groups it is registered with. */
export async function registrations(store: WorkloadStore): Promise<Map<string, string[]>> {
  const byClient = new Map<string, string[]>();
  for (const group of await store.groupNames()) {
    for (const id of (await store.readGroup(group))?.registered_clients ?? []) {
      byClient.set(id, [...(byClient.get(id) ?? []), group]);
    }
  }
  return byClient;
}

/** How one client authenticates to one endpoint, or why it cannot. */
export function entryAuth(
  client: ClientSpec,
  endpoint: Endpoint,
  tokenEnv: string | undefined,
): EntryAuth | string {
  if (!endpoint.requiresAuth) return { kind: 'none' };
  if (tokenEnv && client.envReference) return { kind: 'header', envVar: tokenEnv };
  if (client.oauthDiscovery) return { kind: 'none' };
  return `"${endpoint.name}" requires OIDC tokens and ${client.title} neither discovers OAuth (RFC 9728) nor expands environment variables in headers`;
}

/** The entries a client should have, and the endpoints it cannot use (with why). */
export function desiredEntries(
  client: ClientSpec,
  endpoints: readonly Endpoint[],
  tokenEnv: string | undefined,
): { entries: Map<string, Record<string, unknown>>; skipped: Array<{ name: string; reason: string }> } {
  const entries = new Map<string, Record<string, unknown>>();
  const skipped: Array<{ name: string; reason: string }> = [];
  for (const endpoint of endpoints) {
    const auth = entryAuth(client, endpoint, tokenEnv);
    const entry = typeof auth === 'string' ? { unsupported: auth } : client.entry(endpoint, auth);
    if ('unsupported' in entry && typeof entry.unsupported === 'string')
      skipped.push({ name: endpoint.name, reason: entry.unsupported });
    else entries.set(endpoint.name, entry);
  }
  return { entries, skipped };
}

export interface ClientSyncResult {
  client: ClientSpec;
  report?: FileReport;
  /** Why the client's file could not be brought in step (it was left untouched). */
  problem?: string;
}

/**
 * Brings `only` (default: every client registered somewhere or with entries Moat wrote) in step.
 * A client whose file cannot be edited is reported and the others still synced.
 */
export async function syncClients(
  store: WorkloadStore,
  options: { only?: readonly ClientSpec[]; tokenEnv?: Map<string, string | null> } = {},
): Promise<ClientSyncResult[]> {
  const registered = await registrations(store);
  const candidates: Array<{ client: ClientSpec; ledger?: Ledger; problem?: string }> = [];
  for (const client of options.only ?? CLIENTS) {
    try {
      const ledger = await readLedger(client.id);
      const followed = registered.has(client.id) || Object.keys(ledger.entries).length > 0;
      if (options.only || followed) candidates.push({ client, ledger });
    } catch (err) {
      candidates.push({ client, problem: errorMessage(err) });
    }
  }
  // Nothing registered anywhere: `moat stop` and friends do not even list the workloads.
  if (candidates.length === 0) return [];
  // Loaded only now: with no client registered, a workload change never loads the format parsers.
  const { reconcileClientFile } = await import('./client-file.js');
  const endpoints = await groupEndpoints(store);
  const env = currentClientEnv();
  const results: ClientSyncResult[] = [];
  for (const { client, ledger, problem } of candidates) {
    if (!ledger) {
      results.push({ client, problem: problem ?? 'unreadable ledger' });
      continue;
    }
    try {
      const groups = registered.get(client.id) ?? [];
      const tokenEnv = options.tokenEnv?.get(client.id);
      const { entries, skipped } = desiredEntries(
        client,
        groups.flatMap((g) => endpoints.get(g) ?? []),
        (tokenEnv === undefined ? ledger.token_env : tokenEnv) ?? undefined,
      );
      // Entries already written stay followed where they are (the file is not moved by a changed $CODEX_HOME).
      const file = ledger.file && Object.keys(ledger.entries).length > 0 ? ledger.file : client.file(env);
      const report = await reconcileClientFile(client, file, entries, {
        ...(tokenEnv !== undefined ? { tokenEnv } : {}),
      });
      report.skipped.push(...skipped);
      results.push({ client, report });
    } catch (err) {
      results.push({ client, problem: errorMessage(err) });
    }
  }
  return results;
}
