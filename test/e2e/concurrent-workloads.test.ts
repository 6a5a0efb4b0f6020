/**
 * Many `moat` processes at once against one state directory: concurrent runs of the same name
 * (exactly one wins), of different names (all win, nothing lost), then concurrent removal (all
 * gone, every supervisor ended). Remote-URL workloads keep this about the state store and the
 * supervisors rather than container start-up time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testHostServer } from '../support/host-server.js';
import { listWorkloads, moat, testMoatHome } from '../support/moat-cli.js';
import { uniqueName } from '../support/podman.js';

const PROCESSES = 6;

const remote = testHostServer();
const home = testMoatHome();

/** A live process (a zombie waiting for init to reap it has ended). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('concurrent moat processes', { timeout: 600_000 }, () => {
  it('agree on names, lose no workload, and remove everything', async () => {
    const contested = uniqueName('same');
    const runs = await Promise.all(
      Array.from({ length: PROCESSES }, () => moat(home, ['run', remote.url, '--name', contested])),
    );
    expect(runs.filter((r) => r.code === 0)).toHaveLength(1);
    const losers = runs.filter((r) => r.code !== 0);
    expect(losers).toHaveLength(PROCESSES - 1);
    for (const loser of losers) {
      expect(loser.code).toBe(2);
      expect(loser.stderr).toContain(`workload "${contested}" already exists`);
    }

    const names = Array.from({ length: PROCESSES }, (_, i) => uniqueName(`many${i}`));
    const many = await Promise.all(names.map((name) => moat(home, ['run', remote.url, '--name', name])));
    expect(many.map((r) => r.code)).toEqual(names.map(() => 0));

    const listed = await listWorkloads(home);
    expect(listed.map((w) => w.name).sort()).toEqual([contested, ...names].sort());
    expect(listed.every((w) => w.status === 'running')).toBe(true);
    expect(new Set(listed.map((w) => w.port)).size).toBe(listed.length);
    const supervisors = listed.map(
      (w) =>
        (
          JSON.parse(readFileSync(join(home, 'data/statuses', `${w.name}.json`), 'utf8')) as {
            process_id: number;
          }
        ).process_id,
    );
    expect(supervisors.every(alive)).toBe(true);

    const removals = await Promise.all([contested, ...names].map((name) => moat(home, ['rm', name])));
    expect(removals.map((r) => r.code)).toEqual(removals.map(() => 0));
    expect(await listWorkloads(home)).toEqual([]);
    expect(supervisors.filter(alive)).toEqual([]);
  });
});
