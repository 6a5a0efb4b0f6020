/**
 * Is a recorded supervisor PID still our supervisor? A PID alone can be reused by any process
 * after a crash, so on Linux the process's start time (from /proc/<pid>/stat) must match the
 * recorded one and its command line must be a moat command; elsewhere only liveness is checked.
 */
import { readFileSync } from 'node:fs';

/** Fields of /proc/<pid>/stat after the command name (state first), or undefined. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Start time of a process in clock ticks after boot (Linux), or undefined when unknown. */
export function processStartTime(pid: number): number | undefined {
  const ticks = Number(statFields(pid)?.[19]);
  return Number.isFinite(ticks) ? ticks : undefined;
}

function commandLine(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when `pid` runs and is the moat process that recorded itself with `startTime`. */
export function isSupervisorProcess(pid: number, startTime: number | undefined): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return false;
  if (statFields(pid)?.[0] === 'Z') return false;
  const argv = commandLine(pid);
  if (argv === undefined) return process.platform !== 'linux';
  if (!argv.some((arg) => /(^|\/)(moat|main\.js)$/.test(arg))) return false;
  return startTime === undefined || processStartTime(pid) === startTime;
}
