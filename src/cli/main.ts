#!/usr/bin/env node
/** Entry point of the `moat` command. */
const args = process.argv.slice(2);

// The long-lived supervisor skips the command tree (see supervise.ts); everything else gets it.
process.exitCode =
  args[0] === 'supervise'
    ? await (await import('./supervise.js')).runSupervise(args.slice(1))
    : await (await import('./program.js')).runCli(args);
