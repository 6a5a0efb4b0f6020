import { describe, expect, it } from 'vitest';
import { LineSplitter } from './framing.js';

function split(chunks: string[], maxBytes?: number): { lines: string[]; oversize: number[] } {
  const lines: string[] = [];
  const oversize: number[] = [];
  const splitter = new LineSplitter(
    (line) => lines.push(line),
    (bytes) => oversize.push(bytes),
    maxBytes,
  );
  for (const chunk of chunks) splitter.push(Buffer.from(chunk));
  return { lines, oversize };
}

describe('LineSplitter', () => {
  it('splits lines across and within chunks, dropping empty lines and CR', () => {
    expect(split(['{"a":1}\n{"b"', ':2}\r\n\n{"c":3}', '\n']).lines).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ]);
  });

  it('keeps an unfinished line until its newline arrives', () => {
    expect(split(['{"a":', '1}']).lines).toEqual([]);
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const bytes = Buffer.from('{"t":"ü"}\n');
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    splitter.push(bytes.subarray(0, 7));
    splitter.push(bytes.subarray(7));
    expect(lines).toEqual(['{"t":"ü"}']);
  });

  it('drops an oversized line and recovers at the next one', () => {
    const result = split(['0123456789', 'abcdef\n{"ok":1}\n'], 12);
    expect(result.lines).toEqual(['{"ok":1}']);
    expect(result.oversize).toHaveLength(1);
  });
});
