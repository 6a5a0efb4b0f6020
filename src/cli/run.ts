/**
 * `moat run [flags] SERVER_OR_IMAGE_OR_PACKAGE_OR_URL [-- ARGS...]`: the command and its flags
 * (run-command.ts). What it does is loaded when it runs (run-action.ts): `moat --help` builds
 * every command, and the run command's work would load the RunConfig schema, the registry,
 * image verification and the OAuth client (docs/performance.md, "CLI responsiveness").
 */
import type { Command } from 'commander';
import type { CliIO } from '../util/io.js';
import { createRunCommand } from './run-command.js';

export function runCommand(io: CliIO): Command {
  const cmd = createRunCommand();
  return cmd.action(async () => (await import('./run-action.js')).runAction(cmd, io));
}
