/**
 * JSON and JSONC files (VS Code's and Zed's settings allow comments and trailing commas) through
 * jsonc-parser: `modify` computes the smallest text edit for one path, so comments, key order and
 * indentation elsewhere stay byte for byte.
 */
import { applyEdits, modify, parseTree, printParseErrorCode, findNodeAtLocation, getNodeValue } from 'jsonc-parser';
import type { Node, ParseError } from 'jsonc-parser';
import type { EntriesAt } from '../types.js';
import { isPlainObject, malformed, notAMap, positionOf, type FormatAdapter } from './adapter.js';

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

  function servers(text: string, file: string, at: EntriesAt): Record<string, unknown> {
    const root = tree(text, file);
    const node = root && findNodeAtLocation(root, at.path);
    if (!node) return {};
    const value: unknown = getNodeValue(node);
    if (!isPlainObject(value)) throw notAMap(file, at.path, Array.isArray(value) ? 'a list' : `a ${node.type}`);
    return value;
  }

  function edit(text: string, path: string[], value: unknown): string {
    const options = { formattingOptions: indentationOf(text) };
    return applyEdits(text, modify(text, path, value, options));
  }

  return {
    parse: (text, file) => {
      const root = tree(text, file);
      return root ? (getNodeValue(root) as unknown) : {};
    },
    entries: (text, file, at) => new Map(Object.entries(servers(text, file, at))),
    set: (text, file, at, name, value) => {
      servers(text, file, at);
      const base = text.trim() === '' ? '{}\n' : text;
      return edit(base, [...at.path, name], value);
    },
    remove: (text, file, at, name) => {
      if (!(name in servers(text, file, at))) return text;
      return edit(text, [...at.path, name], undefined);
    },
  };
}

/** The file's own indentation (first indented line), so new lines look like their neighbours. */
function indentationOf(text: string): { tabSize: number; insertSpaces: boolean; eol: string } {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /^[ \t]+(?=\S)/m.exec(text)?.[0];
  if (indent?.startsWith('\t')) return { tabSize: 1, insertSpaces: false, eol };
  return { tabSize: indent ? indent.length : 2, insertSpaces: true, eol };
}
