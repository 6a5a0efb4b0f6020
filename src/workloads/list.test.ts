import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunConfig } from '../config/runconfig.js';
import { moatDirs } from '../util/paths.js';
import { writeFileAtomic } from './files.js';
import { listWorkloads } from './list.js';
import { WorkloadStore } from './store.js';

let home: string;
let store: WorkloadStore;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'moat-list-'));
  store = new WorkloadStore(moatDirs({ MOAT_HOME: home }));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const remote = (name: string): RunConfig => ({
  schema_version: 'v0.1.0',
  image: 'https://example.com/mcp',
  remote_url: 'https://example.com/mcp',
  name,
  transport: 'streamable-http',
  host: '127.0.0.1',
  port: 4100,
  permission_profile: null,
  group: 'default',
});

/** The PID of a process that has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid;
}

describe('listWorkloads', () => {
  it('reconciles a running record whose supervisor is gone and never hides an unreadable workload', async () => {
    await store.saveRunConfig(remote('alive-once'));
    await store.updateStatus('alive-once', {
      status: 'running',
      context: 'ok',
      process_id: deadPid(),
      url: 'u',
    });
    await store.saveRunConfig(remote('stopped-one'));
    await store.updateStatus('stopped-one', { status: 'stopped', context: 'stopped on request' });
    await writeFileAtomic(store.statusPath('corrupt'), '{oops');
    const { remote_url: _, ...container } = remote('container-one');
    await store.saveRunConfig({ ...container, image: 'example/server:1' });
    await store.updateStatus('container-one', { status: 'stopped' });

    const result = await listWorkloads(store, () => Promise.reject(new Error('no runtime in this test')));
    expect(result.runtimeProblem).toBe('no runtime in this test');
    expect(result.workloads.map((w) => [w.name, w.status])).toEqual([
      ['alive-once', 'unhealthy'],
      ['container-one', 'stopped'],
      ['corrupt', 'unknown'],
      ['stopped-one', 'stopped'],
    ]);
    expect(result.workloads[0]).toMatchObject({ remote: true, url: 'u', port: 4100, group: 'default' });
    expect(result.workloads[0]?.status_context).toContain('moat start alive-once');
    expect(result.workloads[2]?.status_context).toContain('not valid JSON');
  });
});
