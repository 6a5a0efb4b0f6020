/**
 * What building a RunConfig from flags needs from outside (file contents, whether a path exists,
 * the working directory, where warnings go), so the same flags always give the same RunConfig;
 * and the two helpers every section builder gets from buildRunConfig.
 */
import { readFileSync, statSync } from 'node:fs';
import type { FlagSecret } from '../secrets/refs.js';
import { errorMessage, usageError } from '../util/errors.js';
import type { RunFlagName } from './run-flag-values.js';

export interface BuildContext {
  cwd: string;
  /** Reads a text file; throws a usage error naming `flag` when it cannot. */
  readTextFile(path: string, flag: string): string;
  pathKind(path: string): 'file' | 'dir' | 'other' | undefined;
  warn(message: string): void;
}

/** A BuildContext on the real file system. */
export function fsBuildContext(warn: (message: string) => void, cwd = process.cwd()): BuildContext {
  return {
    cwd,
    readTextFile(path, flag) {
      try {
        return readFileSync(path, 'utf8');
      } catch (err) {
        throw usageError(`--${flag}: cannot read ${path}: ${errorMessage(err)}`);
      }
    },
    pathKind(path) {
      try {
        const stat = statSync(path);
        return stat.isFile() ? 'file' : stat.isDirectory() ? 'dir' : 'other';
      } catch {
        return undefined;
      }
    },
    warn,
  };
}

/** Records a command-line secret value to store and returns its reference `NAME,target=TARGET`. */
export type SecretRefFn = (kind: FlagSecret, value: string | undefined) => string | undefined;
/** An absolute path that must exist as a file (or directory); a usage error naming the flag otherwise. */
export type ExistingFn = (
  flag: RunFlagName,
  path: string | undefined,
  kind?: 'file' | 'dir',
) => string | undefined;
