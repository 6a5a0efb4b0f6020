/**
 * YAML (Goose, Continue). The `yaml` package parses the file (with the position of the first
 * error) into nodes that carry their source offsets; the edit is then a splice of the entry's own
 * lines in a block collection (a map entry, or a list item told apart by its key), printed by
 * the same package in the collection's indentation. Re-printing the whole document would move
 * comments and re-space flow lists (`[a]` → `[ a ]`), so the rest of the file is never printed.
 * A flow collection (`extensions: {}`) is edited through the Document API instead.
 */
import { isMap, isScalar, isSeq, parseDocument, stringify, type Document, type Node } from 'yaml';
import type { EntriesAt } from '../types.js';
import { malformed, notAMap, type FormatAdapter } from './adapter.js';
import { isObject } from '../../util/is-object.js';

const PRINT = { lineWidth: 0 } as const;

function document(text: string, file: string): Document {
  const doc = parseDocument(text);
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0] ?? { line: 1, col: 1 };
    throw malformed(file, 'YAML', pos.line, pos.col, first.message.split('\n')[0] ?? first.code);
  }
  if (doc.contents !== null && !isMap(doc.contents)) throw notAMap(file, [], 'not a YAML mapping');
  return doc;
}

/** The collection at `at.path`: a map of entries, or a list when entries are told apart by a key. */
function collection(doc: Document, file: string, at: EntriesAt): Node | undefined {
  const node = doc.getIn(at.path, true) as Node | null | undefined;
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return undefined;
  if (at.listKey ? !isSeq(node) : !isMap(node))
    throw notAMap(file, at.path, at.listKey ? 'not a YAML list' : 'not a YAML mapping');
  return node;
}

function entriesOf(doc: Document, file: string, at: EntriesAt): Map<string, unknown> {
  const node = collection(doc, file, at);
  const plain: unknown = node ? node.toJSON() : undefined;
  if (at.listKey) {
    const key = at.listKey;
    const list = Array.isArray(plain) ? plain.filter(isObject) : [];
    return new Map(list.map((item) => [String(item[key]), item] as [string, unknown]));
  }
  return new Map(Object.entries(isObject(plain) ? plain : {}));
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** The offset just after the line holding `offset - 1` (its newline included). */
function afterLine(text: string, offset: number): number {
  const end = text.indexOf('\n', Math.max(offset - 1, 0));
  return end < 0 ? text.length : end + 1;
}

/** Each entry of a block collection: its name and the lines it spans [start, end). */
function spans(text: string, node: Node, at: EntriesAt): Array<{ name: string; start: number; end: number }> {
  if (isMap(node)) {
    return node.items.flatMap((pair) => {
      const key = pair.key as Node | null;
      const value = pair.value as Node | null;
      if (!key?.range) return [];
      const last = value?.range ?? key.range;
      return [
        {
          name: String((key as { value?: unknown }).value),
          start: lineStart(text, key.range[0]),
          end: afterLine(text, last[1]),
        },
      ];
    });
  }
  if (isSeq(node)) {
    return node.items.flatMap((item) => {
      const it = item as Node;
      if (!it.range) return [];
      const name = isMap(it) ? String(it.get(at.listKey)) : '';
      return [{ name, start: lineStart(text, it.range[0]), end: afterLine(text, it.range[1]) }];
    });
  }
  return [];
}

/** The entry printed as the collection's item, each line indented like its neighbours. */
function printEntry(at: EntriesAt, name: string, value: Record<string, unknown>, indent: string): string {
  const printed = stringify(at.listKey ? [value] : { [name]: value }, PRINT).trimEnd();
  return `${printed
    .split('\n')
    .map((line) => `${indent}${line}`)
    .join('\n')}\n`;
}

function withNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** Sets (value) or removes (undefined) the entry in a block collection; undefined for a flow one. */
function spliceEntry(
  text: string,
  doc: Document,
  at: EntriesAt,
  name: string,
  value: Record<string, unknown> | undefined,
): string | undefined {
  const node = doc.getIn(at.path, true) as Node | null | undefined;
  const present = node && !(isScalar(node) && node.value === null) ? node : undefined;
  if (!present) {
    if (value === undefined) return text;
    if (at.path.length !== 1 || doc.has(at.path[0])) return undefined; // `key:` with no value: Document API
    return `${withNewline(text)}${stringify({ [at.path[0] as string]: at.listKey ? [value] : { [name]: value } }, PRINT)}`;
  }
  if ((present as { flow?: boolean }).flow) return undefined;
  const items = spans(text, present, at);
  const first = items[0];
  if (!first) return undefined;
  const indent = /^[ \t]*/.exec(text.slice(first.start))?.[0] ?? '';
  const own = items.find((item) => item.name === name);
  if (value === undefined) return own ? `${text.slice(0, own.start)}${text.slice(own.end)}` : text;
  const entry = printEntry(at, name, value, indent);
  if (own) return `${text.slice(0, own.start)}${entry}${text.slice(own.end)}`;
  const end = items.at(-1)?.end ?? first.end;
  return `${withNewline(text.slice(0, end))}${entry}${text.slice(end)}`;
}

/** The same edit through the Document API (prints the whole document). */
function documentEdit(
  doc: Document,
  at: EntriesAt,
  name: string,
  value: Record<string, unknown> | undefined,
): string {
  const node = doc.getIn(at.path, true);
  if (at.listKey) {
    const index = isSeq(node)
      ? node.items.findIndex((item) => isMap(item) && String(item.get(at.listKey)) === name)
      : -1;
    if (value === undefined) {
      if (index >= 0) doc.deleteIn([...at.path, index]);
    } else if (index >= 0) doc.setIn([...at.path, index], doc.createNode(value));
    else if (isSeq(node)) doc.addIn(at.path, doc.createNode(value));
    else doc.setIn(at.path, doc.createNode([value]));
  } else if (value === undefined) doc.deleteIn([...at.path, name]);
  else doc.setIn([...at.path, name], doc.createNode(value));
  return doc.toString(PRINT);
}

function edit(
  text: string,
  file: string,
  at: EntriesAt,
  name: string,
  value: Record<string, unknown> | undefined,
): string {
  const doc = document(text, file);
  collection(doc, file, at);
  if (value === undefined && !entriesOf(doc, file, at).has(name)) return text;
  return spliceEntry(text, doc, at, name, value) ?? documentEdit(doc, at, name, value);
}

export const yamlAdapter: FormatAdapter = {
  parse: (text, file) => (document(text, file).toJS() as unknown) ?? {},
  entries: (text, file, at) => entriesOf(document(text, file), file, at),
  set: (text, file, at, name, value) => edit(text, file, at, name, value),
  remove: (text, file, at, name) => edit(text, file, at, name, undefined),
};
