/**
 * A minimal ustar writer: enough to hand a root filesystem to the Engine API's image import
 * without a tar binary. Regular files (from memory or streamed from disk) and directories.
 */
import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';

export type TarEntry =
  | { type: 'dir'; path: string; mode?: number }
  | { type: 'file'; path: string; mode?: number; content: Buffer }
  /** Streamed from a host file (large binaries). */
  | { type: 'hostfile'; path: string; mode?: number; source: string };

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(path: string, size: number, mode: number, typeflag: '0' | '5'): Buffer {
  const block = Buffer.alloc(BLOCK);
  let name = path.replace(/^\/+/, '');
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100)
      throw new Error(`tar: path too long: ${path}`);
    prefix = name.slice(0, cut);
    name = name.slice(cut + 1);
  }
  block.write(name, 0, 100, 'utf8');
  block.write(octal(mode, 8), 100, 8, 'ascii');
  block.write(octal(0, 8), 108, 8, 'ascii'); // uid
  block.write(octal(0, 8), 116, 8, 'ascii'); // gid
  block.write(octal(size, 12), 124, 12, 'ascii');
  block.write(octal(0, 12), 136, 12, 'ascii'); // mtime: fixed, so identical inputs give identical layers
  block.write('        ', 148, 8, 'ascii'); // checksum placeholder
  block.write(typeflag, 156, 1, 'ascii');
  block.write('ustar\0', 257, 6, 'ascii');
  block.write('00', 263, 2, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148, 8, 'ascii');
  return block;
}

const padding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

async function* generate(entries: readonly TarEntry[]): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    if (entry.type === 'dir') {
      yield header(entry.path.endsWith('/') ? entry.path : `${entry.path}/`, 0, entry.mode ?? 0o755, '5');
    } else if (entry.type === 'file') {
      yield header(entry.path, entry.content.length, entry.mode ?? 0o644, '0');
      yield entry.content;
      yield padding(entry.content.length);
    } else {
      const size = statSync(entry.source).size;
      yield header(entry.path, size, entry.mode ?? 0o755, '0');
      for await (const chunk of createReadStream(entry.source)) yield chunk as Buffer;
      yield padding(size);
    }
  }
  yield Buffer.alloc(BLOCK * 2);
}

export function tarStream(entries: readonly TarEntry[]): Readable {
  return Readable.from(generate(entries), { objectMode: false });
}
