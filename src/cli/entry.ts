/**
 * What every `moat` entry point does first (main.ts; proxy-main.ts, the proxy image's): stop on a
 * Node.js too old to run the command's modules, then turn on the compile cache they load through.
 */
import { enableCompileCache } from './compile-cache.js';
import { nodeVersionProblem } from './node-version.js';

export function prepareEntry(): void {
  // engines says >= 22; on an older Node the command tree would fail in obscure ways.
  const tooOld = nodeVersionProblem(process.versions.node);
  if (tooOld) {
    process.stderr.write(`Error: ${tooOld}\n`);
    process.exit(1);
  }
  // Before the command's modules load, so that they are read from the cache (or written to it).
  enableCompileCache();
}
