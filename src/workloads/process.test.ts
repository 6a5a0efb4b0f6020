import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isSupervisorProcess, processStartTime } from './process.js';

describe('isSupervisorProcess', () => {
  it('recognises a live moat process by PID and start time, and nothing else', async () => {
    // A real process whose command line looks like `node …/main.js supervise x`.
    const child = spawn(process.execPath, [
      '-e',
      'setInterval(() => {}, 1000)',
      '/opt/moat/dist/cli/main.js',
    ]);
    await new Promise((resolve) => child.once('spawn', resolve));
    const pid = child.pid!;
    try {
      const started = processStartTime(pid);
      expect(started).toBeGreaterThan(0);
      expect(isSupervisorProcess(pid, started)).toBe(true);
      expect(isSupervisorProcess(pid, undefined)).toBe(true);
      // Same PID, different start time: a reused PID, not our supervisor.
      expect(isSupervisorProcess(pid, started! + 1)).toBe(false);
      // A live process that is not moat (this test runner).
      expect(isSupervisorProcess(process.pid, processStartTime(process.pid))).toBe(false);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    expect(isSupervisorProcess(pid, undefined)).toBe(false);
    expect(isSupervisorProcess(0, undefined)).toBe(false);
  });
});
