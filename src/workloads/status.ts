import { isObject } from '../util/is-object.js';
/**
 * Workload status: what the status file records and how a recorded status is reconciled with
 * what is really running. The file is written by the supervisor and the lifecycle commands; a
 * supervisor killed with SIGKILL cannot update it, so every reader reconciles before showing it.
 */
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

export interface StatusHistoryEntry {
  status: WorkloadStatus;
  context: string;
  at: string;
}

export interface StatusRecord {
  status: WorkloadStatus;
  status_context: string;
  created_at: string;
  updated_at: string;
  /** PID of the supervisor process; 0 when none runs. */
  process_id: number;
  /** The supervisor's start time (Linux clock ticks after boot), so a reused PID is not mistaken for it. */
  process_start?: number;
  container_id?: string;
  /** The URL clients use (the proxy's MCP endpoint). */
  url?: string;
  /** The proxy's port on the host. */
  port?: number;
  /** The dedicated Prometheus `/metrics` URL, when telemetry serves one. */
  metrics_url?: string;
  /** Container restarts after crashes since the supervisor started. */
  restarts: number;
  history: StatusHistoryEntry[];
}

// The status file is Moat's own state, read by every command and by the long-lived supervisor,
// so it is checked by hand: a schema library here would stay resident in every supervisor.

type Check<T> = (value: unknown) => value is T;
const isString: Check<string> = (v): v is string => typeof v === 'string';
const isInteger: Check<number> = (v): v is number => Number.isSafeInteger(v);
const isCount: Check<number> = (v): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isStatus: Check<WorkloadStatus> = (v): v is WorkloadStatus =>
  (WORKLOAD_STATUSES as readonly unknown[]).includes(v);

function required<T>(obj: Record<string, unknown>, key: string, check: Check<T>, what: string): T {
  const value = obj[key];
  if (!check(value)) throw new Error(`field ${key}: expected ${what}`);
  return value;
}

function optional<T>(
  obj: Record<string, unknown>,
  key: string,
  check: Check<T>,
  what: string,
): T | undefined {
  return obj[key] === undefined ? undefined : required(obj, key, check, what);
}

const STATUS_NAMES = `one of ${WORKLOAD_STATUSES.join(', ')}`;

function parseHistoryEntry(value: unknown, index: number): StatusHistoryEntry {
  if (!isObject(value)) throw new Error(`field history[${index}]: expected an object`);
  try {
    return {
      status: required(value, 'status', isStatus, STATUS_NAMES),
      context: required(value, 'context', isString, 'a string'),
      at: required(value, 'at', isString, 'a string'),
    };
  } catch (err) {
    throw new Error(`history[${index}]: ${(err as Error).message}`, { cause: err });
  }
}

/** A parsed status file as a record; throws an Error naming the first bad field. */
export function parseStatusRecord(raw: unknown): StatusRecord {
  if (!isObject(raw)) throw new Error('expected a JSON object');
  const history = raw.history ?? [];
  if (!Array.isArray(history)) throw new Error('field history: expected an array');
  const record: StatusRecord = {
    status: required(raw, 'status', isStatus, STATUS_NAMES),
    status_context: optional(raw, 'status_context', isString, 'a string') ?? '',
    created_at: required(raw, 'created_at', isString, 'a string'),
    updated_at: required(raw, 'updated_at', isString, 'a string'),
    process_id: optional(raw, 'process_id', isCount, 'a non-negative integer') ?? 0,
    restarts: optional(raw, 'restarts', isCount, 'a non-negative integer') ?? 0,
    history: history.map(parseHistoryEntry),
  };
  const processStart = optional(raw, 'process_start', isInteger, 'an integer');
  const containerId = optional(raw, 'container_id', isString, 'a string');
  const url = optional(raw, 'url', isString, 'a string');
  const port = optional(raw, 'port', isInteger, 'an integer');
  const metricsUrl = optional(raw, 'metrics_url', isString, 'a string');
  if (processStart !== undefined) record.process_start = processStart;
  if (containerId !== undefined) record.container_id = containerId;
  if (url !== undefined) record.url = url;
  if (port !== undefined) record.port = port;
  if (metricsUrl !== undefined) record.metrics_url = metricsUrl;
  return record;
}

/** A change to the status file; `status` and `context` are recorded in the history. */
export interface StatusChange {
  status?: WorkloadStatus;
  context?: string;
  process_id?: number;
  process_start?: number;
  container_id?: string;
  url?: string;
  port?: number;
  metrics_url?: string;
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
  for (const key of [
    'process_id',
    'process_start',
    'container_id',
    'url',
    'port',
    'metrics_url',
    'restarts',
  ] as const) {
    if (change[key] !== undefined) Object.assign(next, { [key]: change[key] });
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
  /** Remote workloads and aggregates have no container. */
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
