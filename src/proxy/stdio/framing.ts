/**
 * Newline-delimited JSON-RPC framing for stdio servers: one compact JSON text per line. Splits a
 * byte stream into lines without copying more than the unfinished tail between chunks.
 */

/** A line longer than this is dropped (a runaway server must not grow our memory without bound). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

export class LineSplitter {
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #discarding = false;

  /**
   * @param onLine called with each complete, non-empty line (without `\n` or a trailing `\r`)
   * @param onOversize called once per line that exceeded `maxBytes` and was dropped
   */
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (bytes: number) => void = () => {},
    private readonly maxBytes: number = MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#finishLine(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) this.#keep(chunk.subarray(start));
  }

  #keep(part: Buffer): void {
    if (this.#discarding) return;
    this.#tailBytes += part.length;
    if (this.#tailBytes > this.maxBytes) {
      this.onOversize(this.#tailBytes);
      this.#tail = [];
      this.#tailBytes = 0;
      this.#discarding = true;
      return;
    }
    this.#tail.push(Buffer.from(part));
  }

  #finishLine(last: Buffer): void {
    if (this.#discarding) {
      this.#discarding = false;
      return;
    }
    let line: Buffer = last;
    if (this.#tail.length > 0) {
      if (this.#tailBytes + last.length > this.maxBytes) {
        this.onOversize(this.#tailBytes + last.length);
        this.#tail = [];
        this.#tailBytes = 0;
        return;
      }
      line = Buffer.concat([...this.#tail, last]);
      this.#tail = [];
      this.#tailBytes = 0;
    }
    let end = line.length;
    if (end > 0 && line[end - 1] === 13) end--;
    if (end === 0) return;
    this.onLine(line.toString('utf8', 0, end));
  }
}
