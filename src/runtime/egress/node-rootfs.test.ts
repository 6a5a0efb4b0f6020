import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { nodeHostFiles } from './node-rootfs.js';

describe('nodeHostFiles', () => {
  it('lists this Node binary first, then the shared libraries it loads (the dynamic loader among them)', () => {
    const files = nodeHostFiles();
    expect(files[0]).toBe(process.execPath);
    expect(files.some((f) => /\/libc\.so\.6$/.test(f))).toBe(true);
    expect(files.some((f) => /\/ld-linux[^/]*\.so\.\d$/.test(f))).toBe(true);
  });

  it('needs no libraries for a file that is not dynamically linked', () => {
    const dir = mkdtempSync(join(tmpdir(), 'moat-ldd-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, 'static');
    writeFileSync(script, '#!/bin/sh\n');
    chmodSync(script, 0o755);
    expect(nodeHostFiles(script)).toEqual([script]);
  });
});
