/**
 * Moat's MCP Registry API client against a fixture answering as the official registry's OpenAPI
 * document (2025-12-01) defines (test/support/registry-api-fixture.ts: pages of 3, search,
 * versions, deprecated and deleted entries; every answer checked against the spec), over real
 * HTTP on loopback; and the bad registries: a looping cursor, an oversized page, a server that
 * never answers, a web page instead of an API. Nothing from a failed operation is cached.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRegistryApiFixture, type RegistryApiFixture } from '../../test/support/registry-api-fixture.js';
import { RegistryApiClient, latestUsable, type ApiClientOptions } from './api-client.js';
import { detectRegistryKind } from './detect.js';
import { openRegistry } from './open.js';
import { ResponseCache } from './response-cache.js';
import { saveRegistry } from './source.js';

let fixture: RegistryApiFixture;
let dir: string;

beforeAll(async () => {
  fixture = await startRegistryApiFixture();
  dir = mkdtempSync(join(tmpdir(), 'moat-registry-api-'));
});
afterAll(async () => {
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  expect(fixture.problems).toEqual([]);
  fixture.mode = 'normal';
  fixture.requests.length = 0;
});

let caches = 0;
function newCache(ttlMs?: number): { cache: ResponseCache; files: () => string[] } {
  const path = join(dir, `cache-${++caches}`);
  return {
    cache: new ResponseCache(path, ttlMs),
    files: () => {
      try {
        return readdirSync(path);
      } catch {
        return [];
      }
    },
  };
}

function client(options: Partial<ApiClientOptions> = {}, url = fixture.url): RegistryApiClient {
  return new RegistryApiClient(url, { allowPrivateIp: true, ...options });
}

const names = (entries: Array<{ server: { name: string } }>) => entries.map((e) => e.server.name);

describe('the registry API client against the spec-derived fixture', () => {
  it('pages through every server (pages of 3) and leaves out the entries Moat cannot use', async () => {
    const { entries, skipped } = await client().listServers({ version: 'latest' });
    const pages = fixture.requests.filter((r) => r.url.startsWith('/v0.1/servers?'));
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]?.url).toBe('/v0.1/servers?limit=100&version=latest');
    expect(pages.slice(1).every((r) => r.url.includes('&cursor='))).toBe(true);
    expect(names(entries)).toEqual([
      'io.fixture/alpha',
      'io.fixture/beta',
      'io.fixture/delta',
      'io.fixture/epsilon',
      'io.fixture/eta',
      'io.fixture/mixed',
      'io.fixture/theta',
      'io.fixture/zeta',
    ]);
    expect(entries.find((e) => e.server.name === 'io.fixture/beta')).toMatchObject({
      status: 'deprecated',
      statusMessage: 'use io.fixture/delta',
    });
    expect(skipped).toEqual([expect.stringMatching(/^io\.fixture\/templated: field remotes\[0\]\.url: /)]);
  });

  it('searches with the API, and updated_since brings deleted entries', async () => {
    expect(names((await client().listServers({ search: 'ALPH', version: 'latest' })).entries)).toEqual([
      'io.fixture/alpha',
    ]);
    const since = await client().listServers({ updatedSince: '2026-10-07T00:00:00Z' });
    expect(names(since.entries)).toEqual([
      'io.fixture/gone',
      'io.fixture/mixed',
      'io.fixture/mixed',
      'io.fixture/theta',
      'io.fixture/zeta',
    ]);
    expect(since.entries[0]?.status).toBe('deleted');
  });

  it('picks the latest active version, and keeps the status of deprecated and deleted ones', async () => {
    const mixed = await client().versions('io.fixture/mixed');
    expect(mixed?.map((e) => `${e.server.version} ${e.status}`)).toEqual([
      '2.0.0 deprecated',
      '1.0.0 active',
    ]);
    expect(latestUsable(mixed ?? [])?.server.version).toBe('1.0.0');
    expect(latestUsable((await client().versions('io.fixture/alpha')) ?? [])?.server.version).toBe('1.1.0');
    expect(latestUsable((await client().versions('io.fixture/beta')) ?? [])?.status).toBe('deprecated');
    expect(latestUsable((await client().versions('io.fixture/gone')) ?? [])).toMatchObject({
      status: 'deleted',
      statusMessage: 'withdrawn',
    });
    expect((await client().version('io.fixture/alpha', '1.0.0'))?.server.version).toBe('1.0.0');
    expect(await client().version('io.fixture/alpha', '7.0.0')).toBeUndefined();
    expect(await client().versions('io.fixture/none')).toBeUndefined();
  });

  it('serves a fresh answer from the disk cache, revalidates a stale one with its ETag, and goes offline on the last copy', async () => {
    const fresh = newCache();
    await client({ cache: fresh.cache }).listServers({ version: 'latest' });
    const asked = fixture.requests.length;
    expect(fresh.files().length).toBe(asked);
    await client({ cache: fresh.cache }).listServers({ version: 'latest' });
    expect(fixture.requests.length).toBe(asked); // within the TTL: no request

    const stale = newCache(0);
    await client({ cache: stale.cache }).listServers({ version: 'latest' });
    fixture.requests.length = 0;
    const again = await client({ cache: stale.cache }).listServers({ version: 'latest' });
    expect(again.entries).toHaveLength(8);
    expect(fixture.requests.every((r) => typeof r.headers['if-none-match'] === 'string')).toBe(true);

    const offline = await startRegistryApiFixture();
    const url = offline.url;
    const offlineCache = newCache(0);
    await client({ cache: offlineCache.cache }, url).listServers({ version: 'latest' });
    await offline.close();
    const notices: string[] = [];
    const served = await client(
      { cache: offlineCache.cache, notice: (line) => notices.push(line) },
      url,
    ).listServers({
      version: 'latest',
    });
    expect(served.entries).toHaveLength(8);
    expect(notices).toEqual([
      expect.stringMatching(
        /^registry http:\/\/127\.0\.0\.1:\d+\/v0\.1\/servers\?.* unreachable: .*; using the copy cached at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
      ),
    ]);
  });

  it('reads the API through the registry moat commands use: short names, name@version, status, the catalog', async () => {
    const env = { MOAT_HOME: join(dir, 'home') };
    await saveRegistry({ location: fixture.url, allowPrivateIp: true, kind: 'api' }, env);
    const warnings: string[] = [];
    const registry = await openRegistry({ env, warn: (line) => warnings.push(line) });
    expect(await registry.find('mixed')).toMatchObject({ status: 'active', server: { version: '1.0.0' } });
    expect(await registry.find('beta')).toMatchObject({ status: 'deprecated' });
    expect(await registry.find('gone')).toMatchObject({ status: 'deleted' });
    expect(await registry.find('io.fixture/alpha', '1.0.0')).toMatchObject({ server: { version: '1.0.0' } });
    await expect(registry.find('alpha', '7.0.0')).rejects.toThrow(
      'io.fixture/alpha has no version 7.0.0 in the registry (it has 1.1.0, 1.0.0)',
    );
    expect(await registry.find('fetch')).toMatchObject({
      server: { name: 'io.github.modelcontextprotocol/fetch' },
    });
    const listed = names(await registry.list());
    expect(listed).toContain('io.fixture/zeta');
    expect(listed).toContain('io.github.modelcontextprotocol/time');
    expect(listed).not.toContain('io.fixture/gone');
    expect(warnings).toEqual([
      expect.stringMatching(
        /^1 registry entries left out \(moat cannot use them\), e\.g\. io\.fixture\/templated/,
      ),
    ]);
  });
});

describe('bad registries: one clear error within a bound, nothing cached', () => {
  it('a cursor seen before', async () => {
    fixture.mode = 'loop';
    const { cache, files } = newCache();
    await expect(client({ cache }).listServers()).rejects.toThrow(
      `registry ${fixture.url} repeated the page cursor "the-same-cursor"; stopped`,
    );
    expect(fixture.requests.length).toBe(2);
    expect(files()).toEqual([]);
  });

  it('an answer larger than the limit', async () => {
    fixture.mode = 'huge';
    const { cache, files } = newCache();
    await expect(client({ cache }).listServers()).rejects.toThrow(
      /^registry .* is larger than 8388608 bytes$/,
    );
    expect(files()).toEqual([]);
  });

  it('a server that does not answer', async () => {
    fixture.mode = 'slow';
    const { cache, files } = newCache();
    await expect(client({ cache, timeoutMs: 300 }).listServers()).rejects.toThrow(
      /unreachable: no answer within 0\.3 s$/,
    );
    expect(files()).toEqual([]);
  });

  it('a URL that is neither an API nor a registry file', async () => {
    fixture.mode = 'html';
    await expect(detectRegistryKind(`${fixture.url}/`, true)).rejects.toThrow(
      `${fixture.url}/ is neither an MCP Registry API (${fixture.url}/v0.1/servers?limit=1 did not answer JSON`,
    );
    fixture.mode = 'normal';
    expect(await detectRegistryKind(`${fixture.url}/v0.1/servers`, true)).toEqual({
      source: { location: fixture.url, allowPrivateIp: true, kind: 'api' },
    });
  });
});
