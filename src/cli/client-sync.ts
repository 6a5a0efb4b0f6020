/**
 * The CLI's side of client sync: after each workload change the registered clients' files are
 * brought in step (src/clients/sync.ts), and what changed is said in one line per client.
 */
import type { ClientSyncResult } from '../clients/index.js';
import type { CliIO } from '../util/io.js';
import { warnUser } from '../util/log.js';
import { onWorkloadChange } from '../workloads/changes.js';
import type { WorkloadStore } from '../workloads/store.js';

/** One line per client whose file changed or could not be changed; nothing for the others. */
export function reportSync(results: readonly ClientSyncResult[], io: CliIO): void {
  for (const { client, report, problem } of results) {
    if (problem) {
      warnUser(`${client.title} not updated: ${problem}`, io.stderr);
      continue;
    }
    if (!report) continue;
    const parts = [
      report.added.length ? `added ${report.added.join(', ')}` : '',
      report.updated.length ? `updated ${report.updated.join(', ')}` : '',
      report.removed.length ? `removed ${report.removed.join(', ')}` : '',
    ].filter(Boolean);
    if (parts.length) io.stdout.write(`${client.title}: ${parts.join('; ')} (${report.file})\n`);
    for (const { name, reason } of report.skipped)
      warnUser(`${client.title}: "${name}" not written: ${reason}`, io.stderr);
  }
}

/**
 * Follows workload changes in this process (run, start, stop, rm; a foreground supervisor) until
 * the returned function is called.
 */
export function followWorkloadChanges(io: CliIO, store: () => WorkloadStore): () => void {
  return onWorkloadChange(async () => {
    // Loaded on the first change: commands that change no workload never load the clients' parsers.
    const { syncClients } = await import('../clients/sync.js');
    reportSync(await syncClients(store()), io);
  });
}
