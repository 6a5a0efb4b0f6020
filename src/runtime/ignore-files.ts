/**
 * Ignore files: gitignore-style patterns naming what a mounted directory must not show the
 * container. Read from `.thvignore` (ToolHive's name, so existing projects keep working) and
 * `.moatignore` at the root of each mounted directory, plus the global file in Moat's
 * configuration directory (`--ignore-globally`, on by default).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { moatDirs } from '../util/paths.js';
import { runtimeError } from '../util/errors.js';

/** Names of the per-directory ignore files, read at the root of every mounted directory. */
export const IGNORE_FILES = ['.thvignore', '.moatignore'] as const;

/** The global ignore file: patterns applied to every mounted directory. */
export function globalIgnoreFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(moatDirs(env).config, 'moatignore');
}

/** The patterns of one ignore file: blank lines and `#` comments dropped; none when it is missing. */
export function readIgnorePatterns(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    // An unreadable ignore file must not silently expose what it lists.
    throw runtimeError(`cannot read ignore file ${file}: ${(err as Error).message}`, { cause: err });
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

/** Every pattern for one mounted directory: the global ones (when loaded) then the directory's own. */
export function patternsFor(directory: string, globalPatterns: readonly string[]): string[] {
  return [...globalPatterns, ...IGNORE_FILES.flatMap((name) => readIgnorePatterns(join(directory, name)))];
}
