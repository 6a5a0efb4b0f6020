/**
 * Node's on-disk compile cache for the modules a `moat` process loads. Every command is a new
 * process; with the cache, moat's modules and its dependencies are not compiled again each time
 * (docs/performance.md, "CLI responsiveness"). Node keys each entry by its own version and the
 * file's content, so an upgrade or a changed file is compiled anew.
 */
import module from 'node:module';
import { join } from 'node:path';
import { moatDirs } from '../util/paths.js';

/**
 * Turns the cache on in moat's cache directory. It is only an optimisation: when the directory
 * cannot be created or written, Node leaves the cache off and says nothing. Node 22.0 lacks the
 * API; NODE_DISABLE_COMPILE_CACHE=1 turns it off, and a NODE_COMPILE_CACHE directory wins.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  module.enableCompileCache?.(join(moatDirs(env).cache, 'compile-cache'));
}
