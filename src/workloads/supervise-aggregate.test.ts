/**
 * Who an aggregate's members are, read from a real store: the workloads of its group with a proxy
 * URL, never itself nor another aggregate; healthy only while running under a live supervisor
 * (the running case with a live supervisor is the end-to-end test's, aggregate.test.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../config/runconfig.js';
import { moatDirs } from '../util/paths.js';
import { applyStatusChange, type StatusChange } from './status.js';
import { WorkloadStore } from './store.js';
import {
  aggregateSessionKey,
  groupMembers,
  MEMBER_REFRESH_MS,
  SESSION_KEY_ENV,
} from './supervise-aggregate.js';
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

describe('aggregateSessionKey', () => {
  it('is made once per group, 0600, and every aggregate of the group reads the same one', async () => {
    const [a, b] = await Promise.all([
      aggregateSessionKey(store, 'keyed'),
      aggregateSessionKey(store, 'keyed'),
    ]);
    expect(a.length).toBe(32);
    expect(b.equals(a)).toBe(true);
    expect((await aggregateSessionKey(store, 'keyed')).equals(a)).toBe(true);
    expect(statSync(store.aggregateKeyPath('keyed')).mode & 0o777).toBe(0o600);
    expect((await aggregateSessionKey(store, 'other')).equals(a)).toBe(false);
    await store.deleteGroup('keyed');
    expect((await aggregateSessionKey(store, 'keyed')).equals(a)).toBe(false);
  });

  it('takes the environment key (replicas on several machines), refusing a short one by name', async () => {
    process.env[SESSION_KEY_ENV] = 'a key shared by every replica';
    try {
      expect((await aggregateSessionKey(store, 'keyed')).toString()).toBe('a key shared by every replica');
      process.env[SESSION_KEY_ENV] = 'short';
      await expect(aggregateSessionKey(store, 'keyed')).rejects.toThrow(
        `${SESSION_KEY_ENV} must be at least 16 bytes`,
      );
    } finally {
      delete process.env[SESSION_KEY_ENV];
    }
  });

  it('a damaged key file is an error naming it, not a silent new key', async () => {
    mkdirSync(dirname(store.aggregateKeyPath('damaged')), { recursive: true });
    writeFileSync(store.aggregateKeyPath('damaged'), 'x');
    await expect(aggregateSessionKey(store, 'damaged')).rejects.toThrow(
      /damaged\.aggregate-key holds no session key/,
    );
  });
});

describe('MEMBER_REFRESH_MS', () => {
  it('reads the members at least twice within the shortest restart of a crashed container', () => {
    // Else a member killed and restarted between two reads never leaves the aggregate's lists.
    expect(MEMBER_REFRESH_MS * 2).toBeLessThanOrEqual(DEFAULT_RESTART_POLICY.initialDelayMs);
  });
});
