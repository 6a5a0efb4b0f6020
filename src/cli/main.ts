#!/usr/bin/env node
/** Entry point of the `moat` command. */
import { nodeVersionProblem } from './node-version.js';
import { enableCompileCache } from './compile-cache.js';

// engines says >= 22; on an older Node the command tree would fail in obscure ways.
const tooOld = nodeVersionProblem(process.versions.node);
if (tooOld) {
  process.stderr.write(`Error: ${tooOld}\n`);
  process.exit(1);
}

// Before the command's modules load, so that they are read from the cache (or written to it).
enableCompileCache();

const args = process.argv.slice(2);

// The long-lived processes skip the command tree (see supervise.ts, proxy.ts); everything else gets it.
process.exitCode =
  args[0] === 'supervise'
    ? await (await import('./supervise.js')).runSupervise(args.slice(1))
    : args[0] === 'proxy'
      ? await (await import('./proxy.js')).runProxyCommand(args.slice(1))
      : args[0] === 'operator'
        ? await (await import('./operator.js')).runOperatorCommand(args.slice(1))
        : await (await import('./program.js')).runCli(args);
