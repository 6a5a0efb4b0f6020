/**
 * A root filesystem made from this host's Node binary and the shared libraries it loads, plus
 * given files: an image without any registry or base image. Linux only (the binary must run in
 * a Linux container of the same architecture).
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { errorMessage, notImplemented, runtimeError } from '../../util/errors.js';
import { tarStream, type TarEntry } from './tar.js';

export const NODE_IN_IMAGE = '/usr/local/bin/node';

/** The Node binary and the libraries `ldd` lists for it. */
export function nodeHostFiles(nodePath: string = process.execPath): string[] {
  if (process.platform !== 'linux')
    throw notImplemented(`building Node images on ${process.platform} (needs a Linux host)`);
  let ldd: string;
  try {
    ldd = execFileSync('ldd', [nodePath], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    // A statically linked binary needs no libraries; anything else is a real failure.
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    if (/not a dynamic executable/.test(stdout + stderr)) return [nodePath];
    throw runtimeError(`cannot list the shared libraries of ${nodePath} with ldd: ${errorMessage(err)}`);
  }
  return [nodePath, ...[...ldd.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!)];
}

/** Identifies the host files cheaply (path, size, mtime) for cache keys. */
export function nodeHostIdentity(files: readonly string[]): string[] {
  return files.map((f) => {
    const st = statSync(f);
    return `${f}:${st.size}:${st.mtimeMs}`;
  });
}

/** The rootfs as a tar stream: node, its libraries, /etc/passwd and /etc/group, /tmp, /app, plus `files`. */
export function nodeRootfsTar(
  files: Record<string, Buffer> = {},
  hostFiles: readonly string[] = nodeHostFiles(),
): Readable {
  const [node, ...libs] = hostFiles;
  const dirs = new Set<string>(['/etc', '/tmp', '/app', '/root']);
  for (const path of [NODE_IN_IMAGE, ...libs, ...Object.keys(files)])
    for (let dir = dirname(path); dir !== '/'; dir = dirname(dir)) dirs.add(dir);
  const entries: TarEntry[] = [
    ...[...dirs]
      .sort()
      .map((path): TarEntry => ({ type: 'dir', path, mode: path === '/tmp' ? 0o1777 : 0o755 })),
    { type: 'hostfile', path: NODE_IN_IMAGE, source: node!, mode: 0o755 },
    ...libs.map((lib): TarEntry => ({ type: 'hostfile', path: lib, source: lib, mode: 0o755 })),
    {
      type: 'file',
      path: '/etc/passwd',
      content: Buffer.from(
        'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n',
      ),
    },
    { type: 'file', path: '/etc/group', content: Buffer.from('root:x:0:\nnogroup:x:65534:\n') },
    ...Object.entries(files).map(([path, content]): TarEntry => ({ type: 'file', path, content })),
  ];
  return tarStream(entries);
}
