#!/usr/bin/env node
/**
 * Entry point of the proxy image (Containerfile, target `proxy`; scripts/bundle-proxy.ts bundles
 * it): `moat proxy --config <file>`, what the operator's pods run, and `--version`. The rest of the
 * command tree (and the operator, with @kubernetes/client-node) is not in that image; the same
 * arguments as `moat` give the same behaviour for what it has, so a pod runs either image.
 */
import { prepareEntry } from './entry.js';
import { errorLine } from './exit.js';

prepareEntry();

const [command, ...rest] = process.argv.slice(2);
if (command === 'proxy') {
  process.exitCode = await (await import('./proxy.js')).runProxyCommand(rest);
} else if (command === '--version' || command === 'version') {
  process.stdout.write(`${(await import('./version.js')).versionLine()}\n`);
} else {
  const what = command === undefined ? 'no command' : `the command ${JSON.stringify(command)}`;
  process.stderr.write(
    errorLine(`${what}: this image runs only \`moat proxy --config <file>\` and \`--version\``),
  );
  process.exitCode = 2;
}
