#!/usr/bin/env node
/** Entry point of the `moat` command. */
import { prepareEntry } from './entry.js';

prepareEntry();

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
