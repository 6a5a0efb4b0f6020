import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tarStream } from './tar.js';

describe('tarStream', () => {
  it('writes an archive that GNU tar extracts: directories, modes, long paths, streamed host files', async () => {
    const longDir = `/a/${'d'.repeat(90)}/${'e'.repeat(40)}`;
    const dir = mkdtempSync(join(tmpdir(), 'moat-tar-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const hostFile = join(dir, 'tool');
    writeFileSync(hostFile, Buffer.alloc(1500, 7)); // more than two blocks, not a multiple of 512
    const archive = await buffer(
      tarStream([
        { type: 'dir', path: '/a' },
        { type: 'dir', path: `/a/${'d'.repeat(90)}` },
        { type: 'dir', path: longDir },
        { type: 'dir', path: '/tmp', mode: 0o1777 },
        { type: 'file', path: '/a/hello.txt', content: Buffer.from('hello\n') },
        { type: 'file', path: `${longDir}/f.txt`, content: Buffer.from('deep') },
        { type: 'hostfile', path: '/bin/tool', source: hostFile, mode: 0o755 },
      ]),
    );
    expect(archive.length % 512).toBe(0);
    const out = join(dir, 'out');
    mkdirSync(out);
    execFileSync('tar', ['-x', '-C', out, '--no-same-owner'], { input: archive });
    expect(readFileSync(join(out, 'a/hello.txt'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(out, longDir, 'f.txt'), 'utf8')).toBe('deep');
    expect(readFileSync(join(out, 'bin/tool'))).toEqual(readFileSync(hostFile));
    expect(statSync(join(out, 'bin/tool')).mode & 0o777).toBe(0o755);
    expect(statSync(join(out, 'tmp')).mode & 0o1777).toBe(0o1777);
  });
});
