/**
 * The workload state store in the XDG directories (see util/paths.ts):
 *   runconfigs/<name>.json  the RunConfig, saved before the workload starts (restart source)
 *   statuses/<name>.json    status, context, supervisor PID, container ID, URL, history
 *   statuses/<name>.lock    per-workload lock held around every read-modify-write
 *   groups/<group>.json     groups (membership lives in each RunConfig's `group`)
 *   groups/<group>.aggregate-key  the key of the group's aggregates' session ids (0600)
 *   logs/<name>.log         the supervisor's log (0600)
 * Every write is atomic; every name is validated before it becomes a path.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SCHEMA_VERSION } from '../config/defaults.js';
import type { RunConfig } from '../config/runconfig.js';
import { errorMessage, runtimeError } from '../util/errors.js';
import { moatDirs, type MoatDirs } from '../util/paths.js';
import { readJsonFile, withLock, writeFileAtomic } from './files.js';
import { assertValidName } from './names.js';
import { applyStatusChange, parseStatusRecord, type StatusChange, type StatusRecord } from './status.js';

export interface GroupRecord {
  name: string;
  registered_clients: string[];
  skills: string[];
  plugins: string[];
}

export class WorkloadStore {
  constructor(readonly dirs: MoatDirs = moatDirs()) {}

  runConfigPath(name: string): string {
    return join(this.dirs.runconfigs, `${assertValidName(name)}.json`);
  }

  statusPath(name: string): string {
    return join(this.dirs.statuses, `${assertValidName(name)}.json`);
  }

  logPath(name: string): string {
    return join(this.dirs.logs, `${assertValidName(name)}.log`);
  }

  groupPath(group: string): string {
    return join(this.dirs.groups, `${assertValidName(group, 'group name')}.json`);
  }

  /** The key sealing the session ids of the group's aggregates (workloads/supervise-aggregate.ts). */
  aggregateKeyPath(group: string): string {
    return join(this.dirs.groups, `${assertValidName(group, 'group name')}.aggregate-key`);
  }

  /** Runs `fn` holding the workload's lock; all status and RunConfig writes go through here. */
  withWorkloadLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    return withLock(join(this.dirs.statuses, `${assertValidName(name)}.lock`), fn);
  }

  /** The saved RunConfig, validated against the schema (loaded on first use: see readSavedRunConfig). */
  async readRunConfig(name: string): Promise<RunConfig | undefined> {
    const path = this.runConfigPath(name);
    const raw = await readJsonFile(path);
    if (raw === undefined) return undefined;
    const { parseRunConfig } = await import('../config/runconfig-file.js');
    return parseRunConfig(raw, path);
  }

  /**
   * The saved RunConfig as written, for the supervisor and `moat list`: `moat run` and `moat
   * start` validate it just before they start one, and the schema library would otherwise stay
   * resident for the workload's whole life (or be loaded by every `moat list`). Only its version
   * and name are checked.
   */
  async readSavedRunConfig(name: string): Promise<RunConfig | undefined> {
    const path = this.runConfigPath(name);
    const raw = (await readJsonFile(path)) as Partial<RunConfig> | undefined;
    if (raw === undefined) return undefined;
    if (raw?.schema_version !== SCHEMA_VERSION || raw.name !== name)
      throw runtimeError(
        `${path} is not a run configuration Moat saved for "${name}"; run "moat start ${name}"`,
      );
    return raw as RunConfig;
  }

  /**
   * Writes the RunConfig in the export format (call inside withWorkloadLock), normalized by the
   * schema so the file holds exactly what readRunConfig returns (readSavedRunConfig relies on it).
   */
  async saveRunConfig(config: RunConfig): Promise<void> {
    const path = this.runConfigPath(config.name);
    const { parseRunConfig, serializeRunConfig } = await import('../config/runconfig-file.js');
    await writeFileAtomic(path, serializeRunConfig(parseRunConfig(config, path)));
  }

  async readStatus(name: string): Promise<StatusRecord | undefined> {
    const raw = await readJsonFile(this.statusPath(name));
    if (raw === undefined) return undefined;
    try {
      return parseStatusRecord(raw);
    } catch (err) {
      throw runtimeError(`status file ${this.statusPath(name)} is invalid: ${errorMessage(err)}`);
    }
  }

  /** Writes a status record as is (call inside withWorkloadLock). */
  async writeStatus(name: string, record: StatusRecord): Promise<void> {
    await writeFileAtomic(this.statusPath(name), `${JSON.stringify(record, null, 2)}\n`);
  }

  /**
   * Applies a change under the workload's lock. With `mustExist`, nothing is written when the
   * record is gone (the workload was removed meanwhile). With `owner`, the change is also only
   * made while the record belongs to that supervisor PID (or to none), so a supervisor shutting
   * down never overwrites its successor's status.
   */
  async updateStatus(
    name: string,
    change: StatusChange,
    options: { owner?: number; mustExist?: boolean } = {},
  ): Promise<StatusRecord | undefined> {
    return this.withWorkloadLock(name, async () => {
      const current = await this.readStatus(name);
      if ((options.mustExist || options.owner !== undefined) && !current) return undefined;
      if (options.owner !== undefined && current && ![0, options.owner].includes(current.process_id)) {
        return undefined;
      }
      const next = applyStatusChange(current, change, new Date());
      await this.writeStatus(name, next);
      return next;
    });
  }

  /** Names of all known workloads (a RunConfig or a status file exists), sorted. */
  async workloadNames(): Promise<string[]> {
    const names = new Set<string>();
    for (const dir of [this.dirs.runconfigs, this.dirs.statuses]) {
      for (const file of await listDir(dir)) {
        if (file.endsWith('.json') && !file.startsWith('.')) names.add(file.slice(0, -'.json'.length));
      }
    }
    return [...names].sort();
  }

  /** Deletes the RunConfig, status and log (call inside withWorkloadLock). */
  async deleteWorkloadFiles(name: string): Promise<void> {
    await rm(this.runConfigPath(name), { force: true });
    await rm(this.logPath(name), { force: true });
    await rm(this.statusPath(name), { force: true });
  }

  async readGroup(group: string): Promise<GroupRecord | undefined> {
    return (await readJsonFile(this.groupPath(group))) as GroupRecord | undefined;
  }

  /** Creates the group; returns false when it already existed. */
  async createGroup(group: string): Promise<boolean> {
    return withLock(join(this.dirs.groups, '.groups.lock'), async () => {
      if (await this.readGroup(group)) return false;
      const record: GroupRecord = { name: group, registered_clients: [], skills: [], plugins: [] };
      await writeFileAtomic(this.groupPath(group), `${JSON.stringify(record, null, 2)}\n`);
      return true;
    });
  }

  /**
   * Changes a group's record under the groups' lock (the clients registered with it); returns the
   * record written, or undefined when the group does not exist.
   */
  async updateGroup(
    group: string,
    change: (record: GroupRecord) => GroupRecord,
  ): Promise<GroupRecord | undefined> {
    return withLock(join(this.dirs.groups, '.groups.lock'), async () => {
      const current = await this.readGroup(group);
      if (!current) return undefined;
      const next = change({ ...current, registered_clients: current.registered_clients ?? [] });
      await writeFileAtomic(this.groupPath(group), `${JSON.stringify(next, null, 2)}\n`);
      return next;
    });
  }

  async deleteGroup(group: string): Promise<void> {
    await rm(this.groupPath(group), { force: true });
    await rm(this.aggregateKeyPath(group), { force: true });
  }

  async groupNames(): Promise<string[]> {
    const files = await listDir(this.dirs.groups);
    return files
      .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
