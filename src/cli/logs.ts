/** `moat logs <name>`: the server's output (container logs), or with --proxy the supervisor/proxy log. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { defaultLogFormat, type LogFormat } from '../util/log-format.js';
import type { CliIO } from '../util/io.js';
import { lazyRuntime, loadWorkload } from '../workloads/lifecycle.js';
import { writeLogs } from '../workloads/logs.js';
import { WorkloadStore } from '../workloads/store.js';

function lineCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number of lines');
  return n;
}

export function logsCommand(io: CliIO): Command {
  return new Command('logs')
    .description("Show a workload's server logs (or its proxy log with --proxy)")
    .argument('<name>', 'Workload name')
    .option('-f, --follow', 'Keep printing new lines until Ctrl-C', false)
    .option('-p, --proxy', 'Show the supervisor and proxy log instead of the server output', false)
    .option('--tail <lines>', 'Only the last N lines of the server output', lineCount)
    .addOption(
      new Option('--format <format>', 'The proxy log as readable lines or as stored (JSON)')
        .choices(['text', 'json'])
        .default(defaultLogFormat(io.stdout), 'text on a terminal, json otherwise'),
    )
    .action(
      async (name: string, opts: { follow: boolean; proxy: boolean; tail?: number; format: LogFormat }) => {
        const store = new WorkloadStore();
        const workload = await loadWorkload(store, name);
        const controller = new AbortController();
        const stop = () => controller.abort();
        process.once('SIGINT', stop);
        try {
          await writeLogs(store, workload, lazyRuntime(), io.stdout, { ...opts, signal: controller.signal });
        } finally {
          process.off('SIGINT', stop);
        }
      },
    );
}
