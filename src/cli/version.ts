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

export function versionCommand(io: CliIO): Command {
  return new Command('version').description('Show the version of moat').action(() => {
    io.stdout.write(
      `moat ${packageVersion()} (node ${process.versions.node}, ${process.platform}/${process.arch})\n`,
    );
  });
}
