import { describe, expect, it } from 'vitest';
import { BrokenJsonAnswer, JsonFrameSplitter } from './json-frames.js';

function split(chunks: Buffer[]): { raws: string[]; texts: string[]; rest: string } {
  const splitter = new JsonFrameSplitter(1024);
  const frames = chunks.flatMap((chunk) => splitter.push(chunk));
  return {
    raws: frames.map((f) => f.raw.toString()),
    texts: frames.map((f) => f.text),
    rest: splitter.end().toString(),
  };
}

describe('JsonFrameSplitter', () => {
  it('splits JSON lines, a pretty-printed message and messages back to back, split anywhere', () => {
    const text = '\uFEFF{"a":"}\\"{"}\n  {\n "b": [1, {"c": "é"}]\n}\r\n{"d":1}{"e":2}\n\n';
    const bytes = Buffer.from(text);
    for (let size = 1; size <= bytes.length; size++) {
      const chunks = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      const { raws, texts, rest } = split(chunks);
      expect(texts.map((t) => JSON.parse(t) as unknown)).toEqual([
        { a: '}"{' },
        { b: [1, { c: 'é' }] },
        { d: 1 },
        { e: 2 },
      ]);
      // Every byte is handed on, in order, as it came.
      expect(raws.join('') + rest).toBe(text);
    }
  });

  it('hands a line on with its newline when both arrive together', () => {
    const splitter = new JsonFrameSplitter(1024);
    expect(splitter.push(Buffer.from('{"a":1}\n{"b"')).map((f) => f.raw.toString())).toEqual(['{"a":1}\n']);
    expect(splitter.atBoundary).toBe(false);
  });

  it('refuses what cannot be JSON messages: scalars, text, a message cut off, one too large', () => {
    for (const bad of ['hello', '42', '"x"', 'data: {}\n\n', '\uFEFF\uFEFF{}', '{"a":1}\nnull']) {
      expect(() => split([Buffer.from(bad)]), bad).toThrow(BrokenJsonAnswer);
    }
    expect(() => split([Buffer.from('{"a":')])).toThrow(/ends in the middle/);
    expect(() => split([Buffer.from(`{"a":"${'x'.repeat(2000)}`)])).toThrow(/larger than 1024/);
  });
});
