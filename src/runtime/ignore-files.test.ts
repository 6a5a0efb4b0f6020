import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { refuseUnhonoredIgnoreFiles } from './ignore-files.js';

describe('refuseUnhonoredIgnoreFiles', () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'moat-ignore-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('accepts mounts without an ignore file', () => {
    expect(() =>
      refuseUnhonoredIgnoreFiles([{ source: dir(), target: '/data', readOnly: true }]),
    ).not.toThrow();
  });

  it('refuses a mount whose directory has a .thvignore, naming the file (usage error)', () => {
    const clean = dir();
    const hidden = dir();
    writeFileSync(join(hidden, '.thvignore'), '.env\n');
    let error: unknown;
    try {
      refuseUnhonoredIgnoreFiles([
        { source: clean, target: '/a', readOnly: false },
        { source: hidden, target: '/b', readOnly: true },
      ]);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ exitCode: 2 });
    expect((error as Error).message).toContain(join(hidden, '.thvignore'));
    expect((error as Error).message).toContain('not implemented yet');
  });
});
