/**
 * The audit page's data: the audit events the workloads' proxies wrote (to the audit config's
 * `logFile`, or to stdout, which is the workload's proxy log), newest first, filtered. Only the
 * end of each file is read: the page shows recent events.
 */
import { open } from 'node:fs/promises';
import { loadAuditSettings } from '../audit/config.js';
import type { WorkloadStore } from '../workloads/store.js';
import type { AuditFilters, AuditRow } from './shared.js';

/** How much of each file's end is read. */
const TAIL_BYTES = 2 * 1024 * 1024;
/** The most events one answer holds. */
const MAX_ROWS = 500;

export async function recentAuditEvents(store: WorkloadStore, filters: AuditFilters): Promise<AuditRow[]> {
  const names = await store.workloadNames();
  const rows = (
    await Promise.all(
      names.filter((n) => !filters.workload || n === filters.workload).map((n) => eventsOf(store, n)),
    )
  )
    .flat()
    .filter((row) => matches(row, filters));
  return rows.sort((a, b) => b.time.localeCompare(a.time)).slice(0, MAX_ROWS);
}

async function eventsOf(store: WorkloadStore, name: string): Promise<AuditRow[]> {
  const config = await store.readSavedRunConfig(name).catch(() => undefined);
  const settings = config ? await loadAuditSettings(config).catch(() => undefined) : undefined;
  const text = await tail(settings?.logFile ?? store.logPath(name));
  const rows: AuditRow[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"audit_event"')) continue;
    const row = rowOf(name, line);
    if (row) rows.push(row);
  }
  return rows;
}

function rowOf(workload: string, line: string): AuditRow | undefined {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (event.msg !== 'audit_event') return undefined;
  const subjects = (event.subjects ?? {}) as Record<string, unknown>;
  const target = (event.target ?? {}) as Record<string, unknown>;
  const extra = ((event.metadata ?? {}) as { extra?: Record<string, unknown> }).extra ?? {};
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    time: text(event.time),
    workload,
    user: text(subjects.user) || text(subjects.user_id),
    type: text(event.type),
    method: text(target.method),
    target: text(target.name),
    outcome: text(event.outcome),
    denied_by: text(extra.denied_by),
    http_status: typeof extra.http_status === 'number' ? extra.http_status : 0,
  };
}

function matches(row: AuditRow, f: AuditFilters): boolean {
  const has = (value: string, wanted?: string) =>
    !wanted || value.toLowerCase().includes(wanted.toLowerCase());
  return has(row.user, f.user) && has(row.target, f.tool) && (!f.decision || row.outcome === f.decision);
}

/** The last TAIL_BYTES of a file (from the first whole line); empty when it does not exist. */
async function tail(path: string): Promise<string> {
  const file = await open(path, 'r').catch(() => undefined);
  if (!file) return '';
  try {
    const { size } = await file.stat();
    const start = Math.max(0, size - TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    await file.read(buffer, 0, buffer.length, start);
    const text = buffer.toString('utf8');
    return start === 0 ? text : text.slice(text.indexOf('\n') + 1);
  } finally {
    await file.close();
  }
}
