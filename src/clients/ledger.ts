/**
 * Moat's own record of what it wrote into each client's file: `$XDG_STATE_HOME/moat/clients/<id>.json`
 * holds the file, the entries Moat created there (each as written, so an entry the user changed
 * by hand is recognised and left alone) and the environment variable named for header
 * authentication. Only the entries listed here are ever changed or removed.
 */
import { join } from 'node:path';
import { runtimeError } from '../util/errors.js';
import { moatDirs } from '../util/paths.js';
import { readJsonFile, withLock, writeFileAtomic } from '../workloads/files.js';
import { isObject } from '../util/is-object.js';

export interface Ledger {
  /** The file the entries were written to. */
  file?: string;
  /** `--token-env`: the variable whose value the client sends as a bearer token. */
  token_env?: string;
  /** Entry name → the value Moat wrote. */
  entries: Record<string, unknown>;
}

function clientsDir(): string {
  return join(moatDirs().state, 'clients');
}

export function ledgerPath(clientId: string): string {
  return join(clientsDir(), `${clientId}.json`);
}

export async function readLedger(clientId: string): Promise<Ledger> {
  const path = ledgerPath(clientId);
  const raw = await readJsonFile(path);
  if (raw === undefined) return { entries: {} };
  if (!isObject(raw) || !isObject(raw.entries))
    throw runtimeError(`${path} is not a record Moat wrote; remove it to forget the client's entries`);
  return {
    ...(typeof raw.file === 'string' ? { file: raw.file } : {}),
    ...(typeof raw.token_env === 'string' ? { token_env: raw.token_env } : {}),
    entries: raw.entries,
  };
}

export async function writeLedger(clientId: string, ledger: Ledger): Promise<void> {
  await writeFileAtomic(ledgerPath(clientId), `${JSON.stringify(ledger, null, 2)}\n`);
}

/**
 * Runs `fn` holding the client's lock: every read-modify-write of its file and its ledger goes
 * through here, so two moat processes never lose each other's entries.
 */
export function withClientLock<T>(clientId: string, fn: () => Promise<T>): Promise<T> {
  return withLock(join(clientsDir(), `${clientId}.lock`), fn);
}
