/** `moat version`: the package version, Node version and platform. */
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import type { CliIO } from '../util/io.js';

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** What `moat version` and `moat --version` print. */
export function versionLine(): string {
  return `moat ${packageVersion()} (node ${process.versions.node}, ${process.platform}/${process.arch})`;
}

export function versionCommand(io: CliIO): Command {
  return new Command('version').description('Show the version of moat (also moat --version)').action(() => {
    io.stdout.write(`${versionLine()}\n`);
  });
}
