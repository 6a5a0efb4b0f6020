/**
 * A JSON answer split into its messages as its bytes arrive: one message, or JSON lines (one
 * message per line on a response left open), or messages back to back. Each frame is handed on
 * as soon as its closing bracket is in, with the whitespace that followed it in the same chunk
 * (so a line's newline goes with it), byte for byte as the backend sent it.
 */
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../../mcp/jsonrpc.js';

/** One message of a JSON answer. */
export interface JsonFrame {
  /** The bytes as received: whitespace before the message, the message, whitespace after it. */
  raw: Buffer;
  /** The message's own text (no surrounding whitespace, no byte order mark). */
  text: string;
}

/** A JSON answer that cannot be split into messages (the reason is for the client's error). */
export class BrokenJsonAnswer extends Error {}

/** The UTF-8 byte order mark, allowed once at the start of the answer (RFC 8259 §8.1). */
const BOM = [0xef, 0xbb, 0xbf];

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export class JsonFrameSplitter {
  /** Bytes of the frame in progress, from earlier chunks. */
  #held: Buffer[] = [];
  #heldBytes = 0;
  /** Where the message starts in the frame in progress (after its leading whitespace); -1: not yet. */
  #valueStart = -1;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** BOM bytes matched at the very start of the answer; -1 once past it. */
  #bom = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The answer so far holds only whole messages (and whitespace). */
  get atBoundary(): boolean {
    return this.#valueStart === -1;
  }

  /** The frames this chunk completes; throws BrokenJsonAnswer for bytes that cannot be JSON. */
  push(chunk: Buffer): JsonFrame[] {
    const frames: JsonFrame[] = [];
    let frameStart = 0; // in this chunk, where the frame in progress continues
    let i = 0;
    while (i < chunk.length) {
      const c = chunk[i] as number;
      if (this.#valueStart === -1) {
        if (this.#bom !== -1 && c === BOM[this.#bom]) {
          this.#bom++;
          if (this.#bom === BOM.length) this.#bom = -1;
          i++;
          continue;
        }
        if (this.#bom > 0) throw new BrokenJsonAnswer('the body is not valid JSON');
        this.#bom = -1;
        if (isSpace(c)) {
          i++;
          continue;
        }
        if (c !== OPEN_BRACE && c !== OPEN_BRACKET)
          throw new BrokenJsonAnswer('the body is not a JSON object (nor JSON lines of objects)');
        this.#valueStart = this.#heldBytes + i - frameStart;
        this.#depth = 1;
        i++;
        continue;
      }
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c === QUOTE) this.#inString = false;
      } else if (c === QUOTE) this.#inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.#depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--this.#depth === 0) {
          const valueEnd = this.#heldBytes + i + 1 - frameStart;
          i++;
          while (i < chunk.length && isSpace(chunk[i] as number)) i++;
          frames.push(this.#frame(chunk.subarray(frameStart, i), valueEnd));
          frameStart = i;
          continue;
        }
      }
      i++;
    }
    if (frameStart < chunk.length) {
      this.#held.push(chunk.subarray(frameStart));
      this.#heldBytes += chunk.length - frameStart;
      if (this.#heldBytes > this.#maxBytes)
        throw new BrokenJsonAnswer(`a message is larger than ${this.#maxBytes} bytes`);
    }
    return frames;
  }

  /** The whitespace after the last message; throws when the answer ends inside a message. */
  end(): Buffer {
    if (this.#valueStart !== -1 || this.#bom > 0)
      throw new BrokenJsonAnswer('the body ends in the middle of a JSON message');
    const rest = this.#held.length === 1 ? (this.#held[0] as Buffer) : Buffer.concat(this.#held);
    this.#held = [];
    this.#heldBytes = 0;
    return rest;
  }

  #frame(tail: Buffer, valueEnd: number): JsonFrame {
    const raw = this.#heldBytes === 0 ? tail : Buffer.concat([...this.#held, tail]);
    const frame = { raw, text: raw.toString('utf8', this.#valueStart, valueEnd) };
    this.#held = [];
    this.#heldBytes = 0;
    this.#valueStart = -1;
    return frame;
  }
}
