/**
 * Who an aggregate's members are, read from a real store: the workloads of its group with a proxy
 * URL, never itself nor another aggregate; healthy only while running under a live supervisor
 * (the running case with a live supervisor is the end-to-end test's, aggregate.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../config/runconfig.js';
import { moatDirs } from '../util/paths.js';
import { applyStatusChange, type StatusChange } from './status.js';
import { WorkloadStore } from './store.js';
import { groupMembers, MEMBER_REFRESH_MS } from './supervise-aggregate.js';
import { DEFAULT_RESTART_POLICY } from './supervisor.js';

const home = mkdtempSync(join(tmpdir(), 'moat-aggregate-members-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const store = new WorkloadStore(moatDirs({ MOAT_HOME: home }));

async function save(name: string, extra: Partial<RunConfig>, change?: StatusChange): Promise<void> {
  await store.saveRunConfig({
    schema_version: 'v0.1.0',
    image: 'ghcr.io/example/server:1',
    name,
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 4100,
    permission_profile: null,
    group: 'tools',
    ...extra,
  });
  if (change) await store.writeStatus(name, applyStatusChange(undefined, change, new Date()));
}

describe('groupMembers', () => {
  it('lists the group with proxy URLs, without itself or any aggregate; a stopped or orphaned member is unhealthy', async () => {
    const url = (port: number) => `http://127.0.0.1:${port}/mcp`;
    await save('stopped', {}, { status: 'stopped', context: 'stopped on request', url: url(4101) });
    // Recorded running, but its supervisor (pid 0: none) is gone.
    await save('orphan', {}, { status: 'running', context: 'server running', url: url(4102) });
    await save('never-ran', {});
    await save('elsewhere', { group: 'other' }, { status: 'stopped', context: 'x', url: url(4103) });
    const aggregate = { image: '', aggregate: { group: 'tools' } };
    await save('other-aggregate', aggregate, { status: 'stopped', context: 'x', url: url(4104) });
    await save('self', aggregate, { status: 'running', context: 'x', url: url(4105) });

    expect(await groupMembers(store, 'tools', 'self')).toEqual([
      { name: 'orphan', url: url(4102), healthy: false },
      { name: 'stopped', url: url(4101), healthy: false },
    ]);
    expect(await groupMembers(store, 'empty', 'self')).toEqual([]);
  });
});

describe('MEMBER_REFRESH_MS', () => {
  it('reads the members at least twice within the shortest restart of a crashed container', () => {
    // Else a member killed and restarted between two reads never leaves the aggregate's lists.
    expect(MEMBER_REFRESH_MS * 2).toBeLessThanOrEqual(DEFAULT_RESTART_POLICY.initialDelayMs);
  });
});
