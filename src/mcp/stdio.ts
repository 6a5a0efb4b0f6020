/** A stdio MCP server's pipes: newline-delimited JSON-RPC on stdin/stdout. */
import type { Readable, Writable } from 'node:stream';

export interface StdioPipes {
  stdin: Writable;
  stdout: Readable;
  /** The server's stderr, when the attachment carries it apart (never JSON-RPC). */
  stderr?: Readable;
  /** Ends the attachment (not necessarily the server). */
  close(): void;
}
