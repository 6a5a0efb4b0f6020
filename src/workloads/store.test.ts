import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { moatDirs } from '../util/paths.js';
import { writeFileAtomic } from './files.js';
import { WorkloadStore } from './store.js';
import type { RunConfig } from '../config/runconfig.js';

const run = promisify(execFile);

let home: string;
let store: WorkloadStore;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'moat-store-'));
  store = new WorkloadStore(moatDirs({ MOAT_HOME: home }));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const config = (name: string): RunConfig => ({
  schema_version: 'v0.1.0',
  image: 'example/server:1',
  name,
  transport: 'stdio',
  host: '127.0.0.1',
  port: 4000,
  permission_profile: null,
});

describe('WorkloadStore', () => {
  it('round-trips a RunConfig and a status, files private to the user', async () => {
    await store.saveRunConfig(config('alpha'));
    await store.updateStatus('alpha', { status: 'running', context: 'up', port: 4000 });
    expect((await store.readRunConfig('alpha'))?.image).toBe('example/server:1');
    const status = await store.readStatus('alpha');
    expect(status).toMatchObject({ status: 'running', status_context: 'up', port: 4000, process_id: 0 });
    expect(status?.history.map((h) => h.status)).toEqual(['running']);
    expect((await stat(store.statusPath('alpha'))).mode & 0o777).toBe(0o600);
    expect(await store.workloadNames()).toEqual(['alpha']);
  });

  it('reads the saved RunConfig as the supervisor does: as written, checked for version and name', async () => {
    await store.saveRunConfig(config('beta'));
    expect(await store.readSavedRunConfig('beta')).toEqual(await store.readRunConfig('beta'));
    expect(await store.readSavedRunConfig('missing')).toBeUndefined();
    await writeFile(
      store.runConfigPath('beta'),
      JSON.stringify({ ...config('gamma'), schema_version: 'v0.1.0' }),
    );
    await expect(store.readSavedRunConfig('beta')).rejects.toThrow(
      /not a run configuration Moat saved for "beta"/,
    );
    await writeFile(store.runConfigPath('beta'), JSON.stringify({ ...config('beta'), schema_version: 'v9' }));
    await expect(store.readSavedRunConfig('beta')).rejects.toThrow(/moat start beta/);
  });

  it('keeps created_at and appends history on later changes', async () => {
    const first = await store.updateStatus('beta', { status: 'starting' });
    const second = await store.updateStatus('beta', { status: 'running', context: 'ok' });
    expect(second?.created_at).toBe(first?.created_at);
    expect(second?.history.map((h) => h.status)).toEqual(['starting', 'running']);
  });

  it('does not resurrect a removed workload for a supervisor (owner) or mustExist update', async () => {
    await store.updateStatus('gone', { status: 'running', process_id: 1234 });
    await store.withWorkloadLock('gone', () => store.deleteWorkloadFiles('gone'));
    expect(await store.updateStatus('gone', { status: 'stopped' }, { owner: 1234 })).toBeUndefined();
    expect(await store.updateStatus('gone', { status: 'stopped' }, { mustExist: true })).toBeUndefined();
    expect(await store.readStatus('gone')).toBeUndefined();
  });

  it('ignores a stale supervisor writing over its successor', async () => {
    await store.updateStatus('succ', { status: 'running', process_id: 2222 });
    expect(await store.updateStatus('succ', { status: 'stopped' }, { owner: 1111 })).toBeUndefined();
    expect((await store.readStatus('succ'))?.status).toBe('running');
  });

  it('refuses names that could escape the state directory', () => {
    for (const bad of ['../x', 'a/b', '..', '', 'a b']) {
      expect(() => store.runConfigPath(bad)).toThrow(/invalid workload name/);
    }
    expect(() => store.groupPath('../g')).toThrow(/invalid group name/);
  });

  it('reports a corrupt status file by path instead of crashing', async () => {
    await writeFileAtomic(store.statusPath('bad'), '{not json');
    await expect(store.readStatus('bad')).rejects.toThrow(/statuses\/bad\.json is not valid JSON/);
  });

  it('creates groups once', async () => {
    expect(await store.createGroup('team')).toBe(true);
    expect(await store.createGroup('team')).toBe(false);
    expect(await store.readGroup('team')).toEqual({
      name: 'team',
      registered_clients: [],
      skills: [],
      plugins: [],
    });
    expect(await store.groupNames()).toEqual(['team']);
  });
});

describe('writeFileAtomic', () => {
  it('replaces the whole file and leaves no temp files behind', async () => {
    const path = join(home, 'dir', 'file.json');
    await writeFileAtomic(path, 'old');
    await writeFileAtomic(path, 'new contents');
    expect(await readFile(path, 'utf8')).toBe('new contents');
    expect(await readdir(join(home, 'dir'))).toEqual(['file.json']);
  });

  it('readers never see a partial file while writers race', async () => {
    const path = join(home, 'race.json');
    await writeFile(path, JSON.stringify({ n: 0, pad: 'x'.repeat(100_000) }));
    const writers = Array.from({ length: 20 }, (_, n) =>
      writeFileAtomic(path, JSON.stringify({ n, pad: 'x'.repeat(100_000) })),
    );
    const readers = Array.from(
      { length: 50 },
      async () => JSON.parse(await readFile(path, 'utf8')) as unknown,
    );
    await Promise.all([...writers, ...readers]);
  });
});

describe('concurrent moat processes', () => {
  it('lose no update and no workload when 8 processes write the store at once', async () => {
    const workers = 8;
    const rounds = 20;
    const worker = join(import.meta.dirname, '../../test/support/state-worker.ts');
    await Promise.all(
      Array.from({ length: workers }, (_, id) =>
        run(process.execPath, ['--import', 'tsx', worker, home, String(id), String(rounds)]),
      ),
    );
    expect((await store.readStatus('shared'))?.restarts).toBe(workers * rounds);
    const expected = Array.from({ length: workers }, (_, id) =>
      Array.from({ length: rounds / 2 }, (_, k) => `w${id}-${2 * k}`),
    ).flat();
    expect(await store.workloadNames()).toEqual([...expected, 'shared'].sort());
  }, 120_000);
});
