/**
 * `moat list` (`ls`): workloads with their truthful status. Text: a table sorted by name;
 * `--format json`: an array of WorkloadSummary objects (see src/workloads/list.ts).
 */
import { Command, Option } from 'commander';
import type { CliIO } from '../util/io.js';
import { warnUser } from '../util/log.js';
import { lazyRuntime } from '../workloads/lifecycle.js';
import { listWorkloads, type WorkloadSummary } from '../workloads/list.js';
import { WorkloadStore } from '../workloads/store.js';
import { usageError } from '../util/errors.js';

/** Statuses shown without --all: the workloads that are (or are becoming) live. */
const LIVE = new Set(['running', 'starting', 'restarting', 'unhealthy', 'stopping']);

export function formatTable(rows: WorkloadSummary[]): string {
  const header = ['NAME', 'STATUS', 'TRANSPORT', 'URL', 'GROUP', 'CREATED'];
  const lines = [
    header,
    ...rows.map((r) => [r.name, r.status, r.transport, r.url || '-', r.group, r.created_at]),
  ];
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  return (
    lines
      .map((l) =>
        l
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('   ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export function listCommand(io: CliIO): Command {
  return new Command('list')
    .alias('ls')
    .description('List workloads (running ones unless --all)')
    .option('-a, --all', 'Include stopped and failed workloads', false)
    .option('-g, --group <group>', 'Only workloads in this group')
    .addOption(new Option('--format <format>', 'Output format').choices(['text', 'json']).default('text'))
    .action(async (opts: { all: boolean; group?: string; format: 'text' | 'json' }) => {
      const store = new WorkloadStore();
      if (opts.group && !(await store.readGroup(opts.group))) {
        throw usageError(`group "${opts.group}" does not exist ("moat group list" shows the groups)`);
      }
      const { workloads, runtimeProblem } = await listWorkloads(store, lazyRuntime());
      if (runtimeProblem) warnUser(`container states not checked: ${runtimeProblem}`, io.stderr);
      const rows = workloads.filter(
        (w) => (opts.all || LIVE.has(w.status)) && (!opts.group || w.group === opts.group),
      );
      if (opts.format === 'json') {
        io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      } else if (rows.length === 0) {
        const where = opts.group ? ` in group "${opts.group}"` : '';
        io.stdout.write(
          `No ${opts.all ? '' : 'running '}workloads${where}.${opts.all ? '' : ' ("moat list --all" shows all)'}\n`,
        );
      } else {
        io.stdout.write(formatTable(rows));
      }
    });
}
