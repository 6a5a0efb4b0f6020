import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { demux, demuxMerged } from './demux.js';

function frame(stream: 1 | 2, payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

describe('demux', () => {
  it('routes frames to stdout and stderr, across arbitrary chunk boundaries, and ends both', async () => {
    const source = new PassThrough();
    const { stdout, stderr } = demux(source);
    const all = Buffer.concat([frame(1, '{"id":1}\n'), frame(2, 'log line\n'), frame(1, '{"id":2}\n')]);
    for (let i = 0; i < all.length; i += 5) source.write(all.subarray(i, i + 5));
    source.end();
    expect(await text(stdout)).toBe('{"id":1}\n{"id":2}\n');
    expect(await text(stderr)).toBe('log line\n');
  });

  it('merges both streams in arrival order', async () => {
    const source = new PassThrough();
    const merged = demuxMerged(source);
    source.end(Buffer.concat([frame(1, 'a\n'), frame(2, 'b\n'), frame(1, 'c\n')]));
    expect(await text(merged)).toBe('a\nb\nc\n');
  });
});
