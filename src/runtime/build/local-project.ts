/**
 * The build context of a local Go project (`go://./path`): the files of the module that holds
 * the path (the nearest directory with a go.mod), read into memory so the image tag can hash
 * them. `.git` and `node_modules` are left out; so is anything that is not a regular file.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { usageError } from '../../util/errors.js';

export interface LocalProject {
  /** Module-relative path of the package to build (`.` or `./cmd/server`). */
  buildPath: string;
  /** Module-relative POSIX path → content, sorted by path. */
  files: [string, Buffer][];
}

const SKIPPED_DIRS = new Set(['.git', 'node_modules']);
const MAX_FILES = 5000;
const MAX_BYTES = 100 * 1024 * 1024;

export function readLocalGoProject(pkg: string, cwd: string): LocalProject {
  const dir = resolve(cwd, pkg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw usageError(`target go://${pkg}: directory not found: ${dir}`);
  }
  let root = dir;
  while (!existsSync(join(root, 'go.mod'))) {
    const parent = dirname(root);
    if (parent === root) throw usageError(`target go://${pkg}: no go.mod in ${dir} or any parent directory`);
    root = parent;
  }
  const files: [string, Buffer][] = [];
  let bytes = 0;
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) walk(full);
      if (!entry.isFile() || !lstatSync(full).isFile()) continue;
      const content = readFileSync(full);
      bytes += content.length;
      files.push([relative(root, full).split(sep).join('/'), content]);
      if (files.length > MAX_FILES || bytes > MAX_BYTES) {
        throw usageError(
          `target go://${pkg}: the Go module at ${root} is too large to build ` +
            `(more than ${MAX_FILES} files or ${MAX_BYTES / 1024 / 1024} MiB)`,
        );
      }
    }
  };
  walk(root);
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rel = relative(root, dir).split(sep).join('/');
  return { buildPath: rel === '' ? '.' : `./${rel}`, files };
}
