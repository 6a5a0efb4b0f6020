/**
 * JSON and JSONC files (VS Code's, Zed's and opencode's settings allow comments and trailing
 * commas). jsonc-parser reads the file into a tree with exact offsets (and the position of the
 * first error); the edit is then one text splice at the entry: a new entry is added on its own
 * lines after the last one, in the file's indentation, and a removed entry takes its own lines
 * with it. Nothing else is re-printed, so comments, key order and the layout of every other
 * entry stay byte for byte (jsonc-parser's own `modify` re-formats the neighbour's line too).
 */
import {
  findNodeAtLocation,
  getNodeValue,
  parseTree,
  printParseErrorCode,
  type Node,
  type ParseError,
} from 'jsonc-parser';
import type { EntriesAt } from '../types.js';
import { malformed, notAMap, positionOf, type FormatAdapter } from './adapter.js';
import { isObject } from '../../util/is-object.js';

interface Layout {
  unit: string;
  eol: string;
}

/** The file's own indentation unit (its first indented line) and line ending. */
function layoutOf(text: string): Layout {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /^[ \t]+(?=\S)/m.exec(text)?.[0];
  return { unit: indent?.startsWith('\t') ? '\t' : indent ? indent : '  ', eol };
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineEnd(text: string, offset: number): number {
  const end = text.indexOf('\n', offset);
  return end < 0 ? text.length : end;
}

/** The whitespace that starts the line holding `offset`. */
function indentAt(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))?.[0] ?? '';
}

/** `value` printed in the file's layout, its continuation lines indented by `indent`. */
function printed(value: unknown, indent: string, layout: Layout): string {
  return JSON.stringify(value, null, layout.unit).split('\n').join(`${layout.eol}${indent}`);
}

function splice(text: string, from: number, to: number, insert: string): string {
  return `${text.slice(0, from)}${insert}${text.slice(to)}`;
}

/** Skips whitespace and comments from `offset`; the offset of the next token. */
function nextToken(text: string, offset: number): number {
  let i = offset;
  for (;;) {
    while (i < text.length && /\s/.test(text[i] ?? '')) i++;
    if (text.startsWith('//', i)) i = lineEnd(text, i);
    else if (text.startsWith('/*', i))
      i = text.indexOf('*/', i + 2) < 0 ? text.length : text.indexOf('*/', i + 2) + 2;
    else return i;
  }
}

/** Adds property `key: value` to object node `object`. */
function addProperty(text: string, object: Node, key: string, value: unknown, layout: Layout): string {
  const indent = `${indentAt(text, object.offset)}${layout.unit}`;
  const property = `${JSON.stringify(key)}: ${printed(value, indent, layout)}`;
  const last = object.children?.at(-1);
  if (!last) {
    const close = object.offset + object.length - 1;
    return splice(
      text,
      object.offset + 1,
      close,
      `${layout.eol}${indent}${property}${layout.eol}${indentAt(text, object.offset)}`,
    );
  }
  const lastEnd = last.offset + last.length;
  const after = nextToken(text, lastEnd);
  if (text[after] === ',') {
    // A trailing comma (JSONC): the new property goes after it, with one of its own.
    return splice(text, after + 1, after + 1, `${layout.eol}${indent}${property},`);
  }
  const restOfLine = text.slice(lastEnd, lineEnd(text, lastEnd));
  if (/^\s*(\/\/.*)?\r?$/.test(restOfLine)) {
    // A comment after the last property stays on its line; the new property gets a line of its own.
    const end = lineEnd(text, lastEnd) - (restOfLine.endsWith('\r') ? 1 : 0);
    const withNew = splice(text, end, end, `${layout.eol}${indent}${property}`);
    return splice(withNew, lastEnd, lastEnd, ',');
  }
  return splice(text, lastEnd, lastEnd, `,${layout.eol}${indent}${property}`);
}

/** Removes property node `property` with its own lines and one comma (comments around it stay). */
function removeProperty(text: string, property: Node): string {
  const siblings = property.parent?.children ?? [];
  const end = property.offset + property.length;
  const next = nextToken(text, end);
  const commaAfter = text[next] === ',' ? next : -1;
  let from = property.offset;
  let to = commaAfter >= 0 ? commaAfter + 1 : end;
  const ownLine = text.slice(lineStart(text, from), from).trim() === '';
  if (ownLine && text.slice(to, lineEnd(text, to)).trim() === '') {
    from = lineStart(text, from);
    to = Math.min(lineEnd(text, to) + 1, text.length);
  }
  let out = splice(text, from, to, '');
  const previous = siblings[siblings.indexOf(property) - 1];
  if (commaAfter < 0 && previous) {
    // The last property: the comma before it goes (only the comma).
    const comma = nextToken(text, previous.offset + previous.length);
    if (text[comma] === ',' && comma < from) out = splice(out, comma, comma + 1, '');
  }
  return out;
}

export function jsonAdapter(comments: boolean): FormatAdapter {
  const format = comments ? 'JSONC' : 'JSON';

  function tree(text: string, file: string): Node | undefined {
    if (text.trim() === '') return undefined;
    const errors: ParseError[] = [];
    const root = parseTree(text, errors, { allowTrailingComma: comments, disallowComments: !comments });
    const first = errors[0];
    if (first) {
      const { line, column } = positionOf(text, first.offset);
      throw malformed(file, format, line, column, printParseErrorCode(first.error));
    }
    if (root?.type !== 'object') throw notAMap(file, [], `a JSON ${root?.type ?? 'value'}`);
    return root;
  }

  /** The node holding the entries, checked to be an object when present. */
  function container(root: Node | undefined, file: string, at: EntriesAt): Node | undefined {
    const node = root && findNodeAtLocation(root, at.path);
    if (node && node.type !== 'object')
      throw notAMap(file, at.path, node.type === 'array' ? 'a list' : `a ${node.type}`);
    return node;
  }

  return {
    parse: (text, file) => {
      const root = tree(text, file);
      return root ? (getNodeValue(root) as unknown) : {};
    },
    entries: (text, file, at) => {
      const node = container(tree(text, file), file, at);
      const value: unknown = node ? getNodeValue(node) : {};
      return new Map(Object.entries(isObject(value) ? value : {}));
    },
    set: (text, file, at, name, value) => {
      const base = text.trim() === '' ? `{}${layoutOf(text).eol}` : text;
      const layout = layoutOf(base);
      const root = tree(base, file) as Node;
      const node = container(root, file, at);
      const existing = node && findNodeAtLocation(node, [name]);
      if (existing) {
        return splice(
          base,
          existing.offset,
          existing.offset + existing.length,
          printed(value, indentAt(base, existing.parent?.offset ?? existing.offset), layout),
        );
      }
      if (node) return addProperty(base, node, name, value, layout);
      // The container is missing: created with the entry in it, under the deepest object that exists.
      let parent = root;
      let depth = 0;
      for (; depth < at.path.length; depth++) {
        const child = findNodeAtLocation(parent, [at.path[depth] as string]);
        if (!child) break;
        if (child.type !== 'object') throw notAMap(file, at.path.slice(0, depth + 1), `a ${child.type}`);
        parent = child;
      }
      const nested = at.path
        .slice(depth + 1)
        .reduceRight<unknown>((inner, key) => ({ [key]: inner }), { [name]: value });
      return addProperty(base, parent, at.path[depth] as string, nested, layout);
    },
    remove: (text, file, at, name) => {
      const node = container(tree(text, file), file, at);
      const property = node && findNodeAtLocation(node, [name])?.parent;
      return property ? removeProperty(text, property) : text;
    },
  };
}
