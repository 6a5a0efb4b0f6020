/**
 * The running dashboard, recorded in `<data>/ui.json` (its PID, start time and address; never
 * the token) so `moat ui` finds one already running and `moat ui --stop` stops it.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { MoatDirs } from '../util/paths.js';
import { readJsonFile, withLock } from '../workloads/files.js';
import { isSupervisorProcess, processStartTime } from '../workloads/process.js';

export interface UiInstance {
  pid: number;
  process_start?: number;
  url: string;
}

const STOP_TIMEOUT_MS = 10_000;

function instancePath(dirs: MoatDirs): string {
  return join(dirs.data, 'ui.json');
}

/** The dashboard that runs now, if any (a record left by a killed one does not count). */
export async function runningInstance(dirs: MoatDirs): Promise<UiInstance | undefined> {
  const record = (await readJsonFile(instancePath(dirs)).catch(() => undefined)) as UiInstance | undefined;
  if (!record || typeof record.pid !== 'number') return undefined;
  return isSupervisorProcess(record.pid, record.process_start) ? record : undefined;
}

/**
 * Records this process as the dashboard unless another one runs (returned then, nothing
 * written); `listen` runs under the lock and gives the address to record.
 */
export async function claimInstance(
  dirs: MoatDirs,
  listen: () => Promise<string>,
): Promise<UiInstance | undefined> {
  return withLock(join(dirs.data, 'ui.lock'), async () => {
    const other = await runningInstance(dirs);
    if (other) return other;
    const url = await listen();
    const record: UiInstance = { pid: process.pid, process_start: processStartTime(process.pid), url };
    await writeFileAtomic(instancePath(dirs), `${JSON.stringify(record, null, 2)}\n`);
    return undefined;
  });
}

/** Removes the record when it is this process's. */
export async function releaseInstance(dirs: MoatDirs): Promise<void> {
  const record = (await readJsonFile(instancePath(dirs)).catch(() => undefined)) as UiInstance | undefined;
  if (record?.pid === process.pid) await rm(instancePath(dirs), { force: true });
}

/** Stops the running dashboard (SIGTERM, SIGKILL after 10 s); false when none ran. */
export async function stopInstance(dirs: MoatDirs): Promise<boolean> {
  const instance = await runningInstance(dirs);
  if (!instance) {
    await rm(instancePath(dirs), { force: true });
    return false;
  }
  process.kill(instance.pid, 'SIGTERM');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isSupervisorProcess(instance.pid, instance.process_start)) {
    if (Date.now() > deadline) {
      process.kill(instance.pid, 'SIGKILL');
      break;
    }
    await sleep(50);
  }
  await rm(instancePath(dirs), { force: true });
  return true;
}
