/**
 * Workload status: what the status file records and how a recorded status is reconciled with
 * what is really running. The file is written by the supervisor and the lifecycle commands; a
 * supervisor killed with SIGKILL cannot update it, so every reader reconciles before showing it.
 */
import { z } from 'zod';

export const WORKLOAD_STATUSES = [
  'starting',
  'running',
  'restarting',
  'stopping',
  'stopped',
  'error',
  'unhealthy',
  'removing',
  'unknown',
] as const;
export type WorkloadStatus = (typeof WORKLOAD_STATUSES)[number];

/** How many status changes the file keeps (oldest dropped first). */
export const HISTORY_LIMIT = 50;

const historyEntrySchema = z.object({
  status: z.enum(WORKLOAD_STATUSES),
  context: z.string(),
  at: z.string(),
});
export type StatusHistoryEntry = z.infer<typeof historyEntrySchema>;

export const statusRecordSchema = z.object({
  status: z.enum(WORKLOAD_STATUSES),
  status_context: z.string().default(''),
  created_at: z.string(),
  updated_at: z.string(),
  /** PID of the supervisor process; 0 when none runs. */
  process_id: z.number().int().nonnegative().default(0),
  /** The supervisor's start time (Linux clock ticks after boot), so a reused PID is not mistaken for it. */
  process_start: z.number().int().optional(),
  container_id: z.string().optional(),
  /** The URL clients use (the proxy's MCP endpoint). */
  url: z.string().optional(),
  /** The proxy's port on the host. */
  port: z.number().int().optional(),
  /** Container restarts after crashes since the supervisor started. */
  restarts: z.number().int().nonnegative().default(0),
  history: z.array(historyEntrySchema).default([]),
});
export type StatusRecord = z.infer<typeof statusRecordSchema>;

/** A change to the status file; `status` and `context` are recorded in the history. */
export interface StatusChange {
  status?: WorkloadStatus;
  context?: string;
  process_id?: number;
  process_start?: number;
  container_id?: string;
  url?: string;
  port?: number;
  restarts?: number;
}

/** Applies a change to a record (or creates the first record), stamping `at`. */
export function applyStatusChange(
  record: StatusRecord | undefined,
  change: StatusChange,
  at: Date,
): StatusRecord {
  const now = at.toISOString();
  const base: StatusRecord = record ?? {
    status: change.status ?? 'unknown',
    status_context: '',
    created_at: now,
    updated_at: now,
    process_id: 0,
    restarts: 0,
    history: [],
  };
  const next: StatusRecord = { ...base, updated_at: now };
  for (const key of ['process_id', 'process_start', 'container_id', 'url', 'port', 'restarts'] as const) {
    if (change[key] !== undefined) (next as Record<string, unknown>)[key] = change[key];
  }
  if (change.status !== undefined) {
    next.status = change.status;
    next.status_context = change.context ?? '';
    next.history = [...base.history, { status: change.status, context: next.status_context, at: now }].slice(
      -HISTORY_LIMIT,
    );
  } else if (change.context !== undefined) {
    next.status_context = change.context;
  }
  return next;
}

/** What a reader observed about a workload's processes. */
export interface Observation {
  /** The recorded supervisor PID is alive and really is our supervisor for this workload. */
  supervisorAlive: boolean;
  /** Remote workloads have no container. */
  remote: boolean;
  /** The container as the runtime reports it; undefined when it does not exist. `null`: not checked. */
  container: { running: boolean; state: string } | undefined | null;
}

export interface ReconciledStatus {
  status: WorkloadStatus;
  context: string;
}

/**
 * The status to show: the recorded one when reality agrees, otherwise `unhealthy` or `stopped`
 * with the reason. Never reports `running` for a workload whose supervisor is gone.
 */
export function reconcileStatus(name: string, record: StatusRecord, seen: Observation): ReconciledStatus {
  const recorded = { status: record.status, context: record.status_context };
  const supervised = ['starting', 'running', 'restarting', 'stopping'].includes(record.status);
  if (!supervised) return recorded;
  if (!seen.supervisorAlive) {
    const pid = record.process_id ? ` (pid ${record.process_id})` : '';
    const containerUp = seen.container?.running === true;
    const hint = `run "moat start ${name}" to bring it back`;
    return {
      status: containerUp || record.status === 'running' ? 'unhealthy' : 'stopped',
      context: containerUp
        ? `supervisor process${pid} is not running; the container runs but nothing proxies to it: ${hint}`
        : `supervisor process${pid} is not running (was ${record.status}): ${hint}`,
    };
  }
  if (record.status === 'running' && !seen.remote && seen.container !== null) {
    if (seen.container === undefined) {
      return { status: 'unhealthy', context: 'the container no longer exists' };
    }
    if (!seen.container.running) {
      return { status: 'unhealthy', context: `the container is ${seen.container.state}` };
    }
  }
  return recorded;
}
