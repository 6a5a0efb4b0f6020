/**
 * The aggregate's list cursors: opaque to clients, they say where the next page starts as a
 * member and a position among that member's entries, so a page boundary stays put when another
 * member joins or leaves between two pages.
 */
import { ProtocolError } from '@modelcontextprotocol/server';

export interface CursorPosition {
  /** The list the cursor belongs to (a tools cursor is no prompts cursor). */
  list: string;
  member: string;
  /** Index among the member's exposed entries of that list. */
  index: number;
}

const INVALID_PARAMS = -32602;

export function encodeCursor(position: CursorPosition): string {
  const { list, member, index } = position;
  return Buffer.from(JSON.stringify({ l: list, m: member, i: index })).toString('base64url');
}

/** The position a cursor names; a cursor this aggregate did not make for `list` is -32602. */
export function decodeCursor(cursor: string, list: string): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const { l, m, i } = (parsed ?? {}) as { l?: unknown; m?: unknown; i?: unknown };
  if (l !== list || typeof m !== 'string' || typeof i !== 'number' || !Number.isSafeInteger(i) || i < 0) {
    throw new ProtocolError(INVALID_PARAMS, `invalid cursor for ${list}`);
  }
  return { list, member: m, index: i };
}
