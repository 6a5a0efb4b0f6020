/**
 * `moat tools list <workload>` and `moat tools approve <workload> <tool>`: the tool definition
 * pins of a local workload (tool_pinning), and approval of a changed definition.
 */
import { Command } from 'commander';
import { approveTool, FilePinStore, pinFile } from '../pinning/index.js';
import type { CliIO } from '../util/io.js';
import { usageError } from '../util/errors.js';
import { moatDirs } from '../util/paths.js';

function storeFor(workload: string): FilePinStore {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(workload)) {
    throw usageError(`workload name "${workload}" is not valid: letters, digits, '.', '_' and '-'`);
  }
  return new FilePinStore(pinFile(moatDirs().state, workload));
}

export function toolsCommand(io: CliIO): Command {
  const tools = new Command('tools').description("Tool definition pins of a workload's MCP server");
  tools
    .command('list')
    .description('List pinned tools: pinned, or changed (awaiting approval)')
    .argument('<workload>', 'Workload name')
    .option('--format <format>', 'text or json', 'text')
    .action(async (workload: string, opts: { format: string }) => {
      if (opts.format !== 'text' && opts.format !== 'json') {
        throw usageError(`--format "${opts.format}" is not valid: text or json`);
      }
      const pins = await storeFor(workload).load();
      if (opts.format === 'json') {
        io.stdout.write(`${JSON.stringify(pins, null, 2)}\n`);
        return;
      }
      const names = Object.keys(pins).sort();
      if (names.length === 0) {
        io.stdout.write(`No pinned tools for ${workload} (tool_pinning off, or no tools/list seen yet)\n`);
        return;
      }
      for (const name of names) {
        const pin = pins[name]!;
        const state = pin.changed ? `CHANGED since ${pin.changed.seenAt}` : 'pinned';
        io.stdout.write(`${name}\t${state}\t${pin.hash.slice(0, 12)}\n`);
      }
    });
  tools
    .command('approve')
    .description("Approve a tool's changed definition (it is pinned as the new one)")
    .argument('<workload>', 'Workload name')
    .argument('<tool>', 'Tool name as the server lists it')
    .action(async (workload: string, tool: string) => {
      if (!(await approveTool(storeFor(workload), tool))) {
        throw usageError(
          `tool "${tool}" of ${workload} has no changed definition to approve (see moat tools list ${workload})`,
        );
      }
      io.stdout.write(`Approved the new definition of ${tool} for ${workload}\n`);
    });
  return tools;
}
