/**
 * YAML (Goose, Continue) through the `yaml` package's Document API: the file is parsed to a
 * document that keeps comments, anchors and styles, one node is set or deleted, and the document
 * is printed back; untouched nodes keep their source form.
 */
import { isMap, isSeq, parseDocument, type Document } from 'yaml';
import type { EntriesAt } from '../types.js';
import { isPlainObject, malformed, notAMap, type FormatAdapter } from './adapter.js';

function document(text: string, file: string): Document {
  const doc = parseDocument(text, { keepSourceTokens: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0] ?? { line: 1, col: 1 };
    throw malformed(file, 'YAML', pos.line, pos.col, first.message.split('\n')[0] ?? first.code);
  }
  if (doc.contents !== null && !isMap(doc.contents)) throw notAMap(file, [], 'not a YAML mapping');
  return doc;
}

/** The collection at `at.path`: a map of entries, or a list when entries are told apart by a key. */
function collection(doc: Document, file: string, at: EntriesAt): unknown {
  const node = doc.getIn(at.path, true);
  if (node === undefined || node === null) return undefined;
  const ok = at.listKey ? isSeq(node) : isMap(node);
  if (!ok) throw notAMap(file, at.path, at.listKey ? 'not a YAML list' : 'not a YAML mapping');
  return node;
}

function entriesOf(doc: Document, file: string, at: EntriesAt): Map<string, unknown> {
  const node = collection(doc, file, at);
  const data: unknown = node === undefined ? undefined : doc.getIn(at.path, false);
  const plain: unknown = data && typeof data === 'object' && 'toJSON' in data ? (data as { toJSON(): unknown }).toJSON() : data;
  if (at.listKey) {
    const list = Array.isArray(plain) ? plain : [];
    const key = at.listKey;
    return new Map(
      list.filter(isPlainObject).map((item) => [String(item[key]), item] as [string, unknown]),
    );
  }
  return new Map(Object.entries(isPlainObject(plain) ? plain : {}));
}

/** Index of the list item named `name`, or -1. */
function indexIn(doc: Document, at: EntriesAt, name: string): number {
  const node = doc.getIn(at.path, true);
  if (!isSeq(node)) return -1;
  return node.items.findIndex((item) => isMap(item) && String(item.get(at.listKey as string)) === name);
}

const PRINT = { lineWidth: 0 } as const;

export const yamlAdapter: FormatAdapter = {
  parse: (text, file) => document(text, file).toJS() ?? {},
  entries: (text, file, at) => entriesOf(document(text, file), file, at),
  set(text, file, at, name, value) {
    const doc = document(text, file);
    collection(doc, file, at);
    if (at.listKey) {
      const index = indexIn(doc, at, name);
      if (index >= 0) doc.setIn([...at.path, index], doc.createNode(value));
      else if (doc.hasIn(at.path)) doc.addIn(at.path, doc.createNode(value));
      else doc.setIn(at.path, doc.createNode([value]));
    } else {
      doc.setIn([...at.path, name], doc.createNode(value));
    }
    return doc.toString(PRINT);
  },
  remove(text, file, at, name) {
    const doc = document(text, file);
    collection(doc, file, at);
    if (at.listKey) {
      const index = indexIn(doc, at, name);
      if (index < 0) return text;
      doc.deleteIn([...at.path, index]);
    } else {
      if (!doc.hasIn([...at.path, name])) return text;
      doc.deleteIn([...at.path, name]);
    }
    return doc.toString(PRINT);
  },
};
