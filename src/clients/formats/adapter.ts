/**
 * A format adapter edits one entry of a client's file as text, so that everything else in the
 * file (comments, order, indentation, foreign entries) stays as it was. Every adapter refuses a
 * malformed file with the file and the position (line:column) of the first problem.
 */
import { runtimeError } from '../../util/errors.js';
import type { EntriesAt } from '../types.js';

export interface FormatAdapter {
  /** The file's data as plain values (used to verify an edit changed only Moat's entry). */
  parse(text: string, file: string): unknown;
  /** The entries at `at`, by name. */
  entries(text: string, file: string, at: EntriesAt): Map<string, unknown>;
  /** The text with entry `name` set to `value` (added at the end when new). */
  set(text: string, file: string, at: EntriesAt, name: string, value: Record<string, unknown>): string;
  /** The text without entry `name`. */
  remove(text: string, file: string, at: EntriesAt, name: string): string;
}

/** A file Moat cannot read as its format: one line, the position first, and the promise kept. */
export function malformed(file: string, format: string, line: number, column: number, detail: string): Error {
  return runtimeError(
    `${file}:${line}:${column}: not valid ${format} (${detail}); fix it first — Moat left the file untouched`,
  );
}

/** 1-based line and column of a 0-based offset. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** The value at `path` must be a map (or missing): anything else is a file Moat will not guess about. */
export function notAMap(file: string, path: string[], found: string): Error {
  return runtimeError(
    `${file}: "${path.join('.')}" is ${found}, not a table of servers; fix it first — Moat left the file untouched`,
  );
}
