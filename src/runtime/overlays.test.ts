import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readIgnorePatterns } from './ignore-files.js';
import { applyOverlays, emptyOverlayFile, overlaysReport, resolveOverlays } from './overlays.js';
import type { ContainerSpec } from './types.js';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'moat-overlays-'));
  dirs.push(d);
  return d;
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function files(root: string, entries: Record<string, string>): string {
  for (const [path, content] of Object.entries(entries)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const mount = (source: string, target: string) => ({ source, target, readOnly: false });
const none = { globalPatterns: [] };

describe('readIgnorePatterns', () => {
  it('drops blank lines and comments, keeps negations, and reads a missing file as empty', () => {
    const root = files(dir(), { '.thvignore': '# comment\n\n.env\r\n!keep.env\nsecrets/\n' });
    expect(readIgnorePatterns(join(root, '.thvignore'))).toEqual(['.env', '!keep.env', 'secrets/']);
    expect(readIgnorePatterns(join(root, 'missing'))).toEqual([]);
  });
});

describe('resolveOverlays', () => {
  it('hides matching files and directories of both ignore files, at every depth, without descending', () => {
    const root = files(dir(), {
      '.thvignore': '.env\n',
      '.moatignore': 'secrets/\n*.pem\n',
      '.env': 'x',
      'app/.env': 'x',
      'app/main.ts': 'x',
      'secrets/a.pem': 'x',
      'certs/b.pem': 'x',
    });
    expect(resolveOverlays([mount(root, '/w')], none)).toEqual([
      { kind: 'file', target: '/w/.env' },
      { kind: 'file', target: '/w/app/.env' },
      { kind: 'file', target: '/w/certs/b.pem' },
      { kind: 'directory', target: '/w/secrets' },
    ]);
  });

  it('applies global patterns to every mounted directory; none without any pattern', () => {
    const a = files(dir(), { 'id.pem': 'x', 'ok.txt': 'x' });
    const b = files(dir(), { 'k.pem': 'x' });
    const mounts = [mount(a, '/a'), mount(b, '/b')];
    expect(resolveOverlays(mounts, { globalPatterns: ['*.pem'] }).map((o) => o.target)).toEqual([
      '/a/id.pem',
      '/b/k.pem',
    ]);
    expect(resolveOverlays(mounts, none)).toEqual([]);
  });

  it('covers what a matching symlink points at when a mount shows it, and ignores links out of every mount', () => {
    const outside = files(dir(), { 'secret.txt': 'x', 'dir/f': 'x' });
    const root = files(dir(), { '.moatignore': 'link*\n', 'real/x': 'x' });
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out'));
    symlinkSync('real', join(root, 'link-in'));
    symlinkSync('/nonexistent/moat', join(root, 'link-dangling'));
    expect(resolveOverlays([mount(root, '/w')], none)).toEqual([{ kind: 'directory', target: '/w/real' }]);
    // The same link target shown through a second mount is covered there.
    expect(resolveOverlays([mount(root, '/w'), mount(outside, '/o')], none)).toEqual([
      { kind: 'file', target: '/o/secret.txt' },
      { kind: 'directory', target: '/w/real' },
    ]);
  });

  it('never follows a symlinked directory while walking', () => {
    const outside = files(dir(), { 'deep/.env': 'x' });
    const root = files(dir(), { '.moatignore': '.env\n' });
    symlinkSync(outside, join(root, 'escape'));
    expect(resolveOverlays([mount(root, '/w')], none)).toEqual([]);
  });

  it('leaves paths a deeper mount covers to that mount', () => {
    const outer = files(dir(), { '.moatignore': '.env\n', 'sub/.env': 'x', '.env': 'x' });
    const inner = files(dir(), { 'other.txt': 'x' });
    expect(resolveOverlays([mount(outer, '/w'), mount(inner, '/w/sub')], none)).toEqual([
      { kind: 'file', target: '/w/.env' },
    ]);
  });

  it('refuses a tree too big to check with a usage error naming the mount', () => {
    const root = files(dir(), { '.moatignore': '.env\n', a: 'x', b: 'x', c: 'x' });
    expect(() => resolveOverlays([mount(root, '/w')], { globalPatterns: [], maxEntries: 3 })).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringContaining(`${root} (mounted at /w)`) }),
    );
  });

  it('fails rather than exposing files when an ignore file cannot be read', () => {
    // A directory where the ignore file should be: unreadable even for root.
    const root = dir();
    mkdirSync(join(root, '.moatignore'));
    expect(() => resolveOverlays([mount(root, '/w')], none)).toThrow(/cannot read ignore file/);
  });
});

describe('applyOverlays', () => {
  it('binds the empty file read-only over files and lists directories for tmpfs', () => {
    const spec = { mounts: [mount('/src', '/w')], tmpfs: undefined } as unknown as ContainerSpec;
    const result = applyOverlays(
      spec,
      [
        { kind: 'file', target: '/w/.env' },
        { kind: 'directory', target: '/w/secrets' },
      ],
      '/empty',
    );
    expect(result.mounts).toEqual([
      mount('/src', '/w'),
      { source: '/empty', target: '/w/.env', readOnly: true },
    ]);
    expect(result.tmpfs).toEqual(['/w/secrets']);
  });

  it('prints one line per hidden path, or says there is none', () => {
    expect(overlaysReport([])).toBe('No ignored paths to hide in the container\n');
    expect(
      overlaysReport([
        { kind: 'file', target: '/w/.env' },
        { kind: 'directory', target: '/w/secrets' },
      ]),
    ).toBe(
      'Hiding /w/.env (ignored file: empty read-only file)\n' +
        'Hiding /w/secrets/ (ignored directory: empty read-only tmpfs)\n',
    );
  });
});

describe('emptyOverlayFile', () => {
  it('is an empty read-only file under MOAT_HOME, emptied again if something wrote to it', () => {
    const home = dir();
    const file = emptyOverlayFile({ MOAT_HOME: home });
    expect(file.startsWith(home)).toBe(true);
    expect(statSync(file).size).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o444);
    chmodSync(file, 0o644);
    writeFileSync(file, 'planted');
    expect(readFileSync(emptyOverlayFile({ MOAT_HOME: home }), 'utf8')).toBe('');
  });

  it('replaces a symlink put in its place instead of following it', () => {
    const home = dir();
    const file = emptyOverlayFile({ MOAT_HOME: home });
    const victim = join(dir(), 'victim');
    writeFileSync(victim, 'keep me');
    rmSync(file);
    symlinkSync(victim, file);
    expect(statSync(emptyOverlayFile({ MOAT_HOME: home })).size).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
  });
});
