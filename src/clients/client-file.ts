/**
 * Safe edits of a client's file: under the client's lock, the file is read and refused when it is
 * malformed, read-only or its directory is missing; Moat's entries are set or removed as text
 * edits; the result is verified (it must parse to the old data with only those entries changed);
 * the old file is kept as `<file>.moat-backup`; the new one replaces it atomically with the same
 * permissions. Only entries in the client's ledger are changed; a foreign entry of the same
 * name, or one of Moat's that the user edited by hand, is left alone and reported.
 */
import { copyFile, readFile, realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../util/atomic-file.js';
import { errorMessage, runtimeError } from '../util/errors.js';
import { adapterFor, type FormatAdapter } from './formats/index.js';
import { readLedger, withClientLock, writeLedger, type Ledger } from './ledger.js';
import { sameValue } from './same-value.js';
import type { ClientSpec, EntriesAt } from './types.js';

export interface FileReport {
  file: string;
  added: string[];
  updated: string[];
  removed: string[];
  /** Entries Moat wanted to write or remove but left alone, with why. */
  skipped: Array<{ name: string; reason: string }>;
}

/** The suffix of the copy of a file as it was before Moat's last change to it. */
export const BACKUP_SUFFIX = '.moat-backup';

interface FileState {
  path: string;
  text: string;
  exists: boolean;
  mode: number;
}

/** The file to edit: a symlink (dotfile managers) is followed, so the link itself stays. */
async function readClientFile(path: string): Promise<FileState> {
  const target = await realpath(path).catch(() => path);
  const dir = dirname(target);
  const dirStat = await stat(dir).catch(() => undefined);
  if (!dirStat?.isDirectory())
    throw runtimeError(`${dir} does not exist (is the client installed?); Moat created nothing`);
  let info;
  try {
    info = await stat(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return { path: target, text: '', exists: false, mode: 0o600 };
    throw runtimeError(`cannot read ${target}: ${errorMessage(err)}`);
  }
  // Checked by the mode bits, not access(): root may write anything, but a read-only file is a user's choice.
  if ((info.mode & 0o222) === 0) throw runtimeError(`${target} is read-only; Moat left it untouched`);
  try {
    return { path: target, text: await readFile(target, 'utf8'), exists: true, mode: info.mode & 0o777 };
  } catch (err) {
    throw runtimeError(`cannot read ${target}: ${errorMessage(err)}`);
  }
}

/**
 * Makes Moat's entries in the client's file exactly `desired` (name → entry): adds and updates
 * those, removes Moat's others. `tokenEnv` (when given) is recorded in the ledger.
 */
export async function reconcileClientFile(
  client: ClientSpec,
  file: string,
  desired: ReadonlyMap<string, Record<string, unknown>>,
  options: { tokenEnv?: string | null } = {},
): Promise<FileReport> {
  return withClientLock(client.id, async () => {
    const ledger = await readLedger(client.id);
    const state = await readClientFile(file);
    const adapter = adapterFor(client.format);
    const report: FileReport = { file: state.path, added: [], updated: [], removed: [], skipped: [] };
    const current = adapter.entries(state.text, state.path, client.at);
    const owned: Record<string, unknown> = {};
    let text = state.text;
    const handEdited = (name: string) =>
      report.skipped.push({ name, reason: 'changed by hand since Moat wrote it; left as it is' });

    for (const [name, written] of Object.entries(ledger.entries)) {
      if (desired.has(name)) continue;
      const now = current.get(name);
      if (now === undefined) continue;
      if (!sameValue(now, written)) {
        handEdited(name);
        continue;
      }
      text = verifiedEdit(adapter, client.at, state.path, text, name, undefined);
      report.removed.push(name);
    }
    for (const [name, value] of desired) {
      const now = current.get(name);
      const ours = name in ledger.entries;
      if (now !== undefined && !ours) {
        report.skipped.push({
          name,
          reason: `${state.path} already has an entry "${name}" that Moat did not write`,
        });
        continue;
      }
      if (now !== undefined && !sameValue(now, ledger.entries[name])) {
        handEdited(name);
        continue;
      }
      owned[name] = value;
      if (now !== undefined && sameValue(now, value)) continue;
      text = verifiedEdit(adapter, client.at, state.path, text, name, value);
      (now === undefined ? report.added : report.updated).push(name);
    }

    if (text !== state.text) await replaceFile(state, text);
    const tokenEnv = options.tokenEnv === undefined ? ledger.token_env : (options.tokenEnv ?? undefined);
    const next: Ledger = { file: state.path, ...(tokenEnv ? { token_env: tokenEnv } : {}), entries: owned };
    await writeLedger(client.id, next);
    return report;
  });
}

/** The old file to `<file>.moat-backup`, then the new text in its place, atomically, same mode. */
async function replaceFile(state: FileState, text: string): Promise<void> {
  try {
    if (state.exists) await copyFile(state.path, `${state.path}${BACKUP_SUFFIX}`);
    await writeFileAtomic(state.path, text, state.mode);
  } catch (err) {
    throw runtimeError(`cannot write ${state.path}: ${errorMessage(err)}`);
  }
}

/**
 * One entry set (`value`) or removed (undefined), checked: the new text must hold exactly that
 * entry changed and parse to the same data everywhere else. A check that fails means the
 * adapter could not edit this file safely; nothing is written then.
 */
function verifiedEdit(
  adapter: FormatAdapter,
  at: EntriesAt,
  file: string,
  text: string,
  name: string,
  value: Record<string, unknown> | undefined,
): string {
  const next =
    value === undefined ? adapter.remove(text, file, at, name) : adapter.set(text, file, at, name, value);
  const before = adapter.entries(text, file, at);
  let after: Map<string, unknown>;
  let rest: [unknown, unknown];
  try {
    after = adapter.entries(next, file, at);
    rest = [withoutEntries(adapter.parse(text, file), at), withoutEntries(adapter.parse(next, file), at)];
  } catch (err) {
    throw unsafe(file, errorMessage(err));
  }
  if (value === undefined) before.delete(name);
  else before.set(name, value);
  const sameEntries = sameValue(Object.fromEntries(before), Object.fromEntries(after));
  if (!sameEntries || !sameValue(rest[0], rest[1]))
    throw unsafe(file, 'the edit would change more than its entry');
  return next;
}

function unsafe(file: string, why: string): Error {
  return runtimeError(`cannot edit ${file} safely (${why}); Moat left it untouched`);
}

/** The data with the entries collection taken out. */
function withoutEntries(data: unknown, at: EntriesAt): unknown {
  const copy = structuredClone(data) as Record<string, unknown>;
  let node: unknown = copy;
  for (const key of at.path.slice(0, -1)) node = (node as Record<string, unknown> | undefined)?.[key];
  if (node && typeof node === 'object')
    delete (node as Record<string, unknown>)[at.path[at.path.length - 1] as string];
  return copy;
}

/** Reads and parses the client's file without changing it: the checks an edit would make first. */
export async function checkClientFile(client: ClientSpec, file: string): Promise<void> {
  const state = await readClientFile(file);
  adapterFor(client.format).entries(state.text, state.path, client.at);
}

/** The entries in the client's file now (for `moat client status`). */
export async function currentEntries(client: ClientSpec, file: string): Promise<Map<string, unknown>> {
  const target = await realpath(file).catch(() => file);
  const text = await readFile(target, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw runtimeError(`cannot read ${target}: ${errorMessage(err)}`);
  });
  return adapterFor(client.format).entries(text, target, client.at);
}
