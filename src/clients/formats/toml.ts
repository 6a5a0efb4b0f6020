/**
 * TOML (Codex's config.toml). smol-toml reads and validates the file (with the position of the
 * first error); the edit itself is surgery on Moat's own table, `[<path>.<name>]` and the keys
 * under it, found by its header and written in one fixed shape: the rest of the file, its
 * comments and formatting included, is not re-serialised. No maintained TOML library preserves
 * comments on a round trip; the caller verifies that the edited file parses to the old data with
 * only this entry changed.
 */
import { parse, stringify, TomlError } from 'smol-toml';
import type { EntriesAt } from '../types.js';
import { malformed, notAMap, type FormatAdapter } from './adapter.js';
import { isObject } from '../../util/is-object.js';

/** The comment Moat writes above its tables, so a reader of the file knows who wrote them. */
export const TOML_MARKER = '# Managed by Moat (moat client remove undoes it)';

function parseToml(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof TomlError) {
      const detail = err.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'parse error';
      throw malformed(file, 'TOML', err.line, err.column, detail);
    }
    throw err;
  }
}

function servers(text: string, file: string, at: EntriesAt): Record<string, unknown> {
  let node: unknown = parseToml(text, file);
  for (const key of at.path) {
    node = isObject(node) ? node[key] : undefined;
    if (node === undefined) return {};
  }
  if (!isObject(node)) throw notAMap(file, at.path, Array.isArray(node) ? 'a list' : `a ${typeof node}`);
  return node;
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function keyText(key: string): string {
  return BARE_KEY.test(key) ? key : JSON.stringify(key);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The header line of the entry's table: `[a.b.name]`, bare or quoted parts, spaces allowed. */
function headerPattern(at: EntriesAt, name: string): RegExp {
  const parts = [...at.path, name].map((p) => `(?:${escapeRegExp(p)}|"${escapeRegExp(p)}")`);
  return new RegExp(`^\\s*\\[\\s*${parts.join('\\s*\\.\\s*')}\\s*\\]\\s*(?:#.*)?$`);
}

const TABLE_HEADER = /^\s*\[/;
const BLANK_OR_COMMENT = /^\s*(?:#.*)?$/;

/**
 * Lines [start, end) of the entry's table: from its header (and Moat's marker just above it) to
 * its last key; comments and blank lines before the next table belong to what follows.
 */
function tableLines(lines: string[], at: EntriesAt, name: string): [number, number] | undefined {
  const header = headerPattern(at, name);
  const start = lines.findIndex((line) => header.test(line));
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length && !TABLE_HEADER.test(lines[end] ?? '')) end++;
  while (end > start + 1 && BLANK_OR_COMMENT.test(lines[end - 1] ?? '')) end--;
  const from = start > 0 && lines[start - 1] === TOML_MARKER ? start - 1 : start;
  return [from, end];
}

function tableText(at: EntriesAt, name: string, value: Record<string, unknown>): string[] {
  const body = stringify(value).trimEnd();
  return [TOML_MARKER, `[${[...at.path, name].map(keyText).join('.')}]`, ...(body ? body.split('\n') : [])];
}

export const tomlAdapter: FormatAdapter = {
  parse: parseToml,
  entries: (text, file, at) => new Map(Object.entries(servers(text, file, at))),
  set(text, file, at, name, value) {
    servers(text, file, at);
    const eol = text.includes('\r\n') ? '\r\n' : '\n';
    const lines = text.split(/\r?\n/);
    const table = tableText(at, name, value);
    const found = tableLines(lines, at, name);
    if (found) {
      lines.splice(found[0], found[1] - found[0], ...table);
      return lines.join(eol);
    }
    const trimmed = text.replace(/\s*$/, '');
    return `${trimmed}${trimmed ? `${eol}${eol}` : ''}${table.join(eol)}${eol}`;
  },
  remove(text, file, at, name) {
    if (!(name in servers(text, file, at))) return text;
    const eol = text.includes('\r\n') ? '\r\n' : '\n';
    const lines = text.split(/\r?\n/);
    const found = tableLines(lines, at, name);
    if (!found) return text; // not a table of its own (inline or dotted keys): not Moat's shape
    let [from, end] = found;
    // One blank line that separated the table from what came before goes with it.
    if (from > 0 && lines[from - 1]?.trim() === '') from--;
    else if (lines[end]?.trim() === '') end++;
    lines.splice(from, end - from);
    return lines.join(eol);
  },
};
