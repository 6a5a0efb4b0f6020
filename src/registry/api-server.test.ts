/**
 * `moat registry serve`'s API against the official registry's OpenAPI document (2025-12-01, the
 * copy in test/fixtures/registry-api/): every answer is checked against the spec's schema, over
 * real HTTP on loopback, and Moat's own API client reads it back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerProblems, SPEC_VERSION } from '../../test/support/registry-api-spec.js';
import { RegistryApiClient, latestUsable } from './api-client.js';
import { serveRegistryApi, type RegistryApiServer } from './api-server.js';
import { catalogServers } from './open.js';
import { mergeRegistries } from './lookup.js';
import { parseRegistryDocument } from './schema.js';

const TOKEN = 'serve-test-token-0123456789';
const extra = parseRegistryDocument(
  {
    servers: [
      {
        name: 'io.team/weather',
        description: 'Team weather server',
        version: '3.1.0',
        packages: [
          {
            registryType: 'npm',
            identifier: '@team/weather',
            version: '3.1.0',
            transport: { type: 'stdio' },
          },
        ],
        _meta: {
          'io.modelcontextprotocol.registry/publisher-provided': {
            'dev.moat': { tags: ['weather'], permissions: 'network' },
          },
        },
      },
    ],
  },
  'test',
);
const servers = mergeRegistries(catalogServers(), extra);
const names = servers.map((s) => s.name).sort((a, b) => a.localeCompare(b));

let open: RegistryApiServer;
let locked: RegistryApiServer;

beforeAll(async () => {
  open = await serveRegistryApi({ host: '127.0.0.1', port: 0, servers });
  locked = await serveRegistryApi({ host: '127.0.0.1', port: 0, servers, token: TOKEN });
});
afterAll(async () => {
  await open.close();
  await locked.close();
});

/** GETs a path and checks the answer against the spec. */
async function get(path: string, headers: Record<string, string> = {}, base = open.url) {
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  const body = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
  if (response.status === 200 || response.status === 404) {
    expect(answerProblems(new URL(path, base).pathname, response.status, body)).toEqual([]);
  }
  return { status: response.status, body, etag: response.headers.get('etag') };
}

type ListBody = {
  servers: Array<{ server: { name: string; version: string } }>;
  metadata: { nextCursor?: string; count: number };
};

describe(`moat registry serve against the OpenAPI document ${SPEC_VERSION}`, () => {
  it('pages through every server with an opaque cursor, as many as limit at a time', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { status, body } = await get(
        `/v0.1/servers?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(status).toBe(200);
      const list = body as unknown as ListBody;
      expect(list.metadata.count).toBe(list.servers.length);
      expect(list.servers.length).toBeLessThanOrEqual(4);
      seen.push(...list.servers.map((s) => s.server.name));
      cursor = list.metadata.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen).toEqual(names);
    expect((await get('/v0.1/servers')).body).toMatchObject({
      metadata: { count: Math.min(30, names.length) },
    });
  });

  it('searches names case-insensitively and filters by version and updated_since', async () => {
    const search = (await get('/v0.1/servers?search=WEATH')).body as unknown as ListBody;
    expect(search.servers.map((s) => s.server.name)).toEqual(['io.team/weather']);
    const exact = (await get('/v0.1/servers?version=3.1.0')).body as unknown as ListBody;
    expect(exact.servers.map((s) => s.server.name)).toEqual(['io.team/weather']);
    const latest = (await get('/v0.1/servers?version=latest&limit=100')).body as unknown as ListBody;
    expect(latest.servers).toHaveLength(names.length);
    expect(
      ((await get('/v0.1/servers?updated_since=2999-01-01T00:00:00Z')).body as unknown as ListBody).servers,
    ).toEqual([]);
    // The API requires a version: an entry without one is served as 0.0.0.
    const remote = (await get('/v0.1/servers?search=deepwiki')).body as unknown as ListBody;
    expect(remote.servers[0]?.server.version).toBe('0.0.0');
  });

  it('answers a server’s versions, one version and latest, and 404 in the spec’s shape', async () => {
    const name = encodeURIComponent('io.team/weather');
    const versions = (await get(`/v0.1/servers/${name}/versions`)).body as unknown as ListBody;
    expect(versions.servers.map((s) => s.server.version)).toEqual(['3.1.0']);
    expect((await get(`/v0.1/servers/${name}/versions/3.1.0`)).body).toMatchObject({
      server: {
        name: 'io.team/weather',
        _meta: {
          'io.modelcontextprotocol.registry/publisher-provided': { 'dev.moat': { tags: ['weather'] } },
        },
      },
      _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true } },
    });
    expect((await get(`/v0.1/servers/${name}/versions/latest`)).status).toBe(200);
    expect(await get(`/v0.1/servers/${name}/versions/9.9.9`)).toMatchObject({
      status: 404,
      body: { error: 'Server version not found' },
    });
    expect(await get(`/v0.1/servers/${encodeURIComponent('io.none/x')}/versions`)).toMatchObject({
      status: 404,
    });
  });

  it('refuses a bad cursor, limit or time with 400, and writes with 405', async () => {
    expect((await get('/v0.1/servers?cursor=not-ours')).status).toBe(400);
    expect((await get('/v0.1/servers?limit=0')).status).toBe(400);
    expect((await get('/v0.1/servers?limit=101')).status).toBe(400);
    expect((await get('/v0.1/servers?updated_since=yesterday')).status).toBe(400);
    const post = await fetch(`${open.url}/v0.1/servers`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
  });

  it('gives every answer an ETag and answers a matching If-None-Match with 304', async () => {
    const first = await get('/v0.1/servers?limit=5');
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect((await get('/v0.1/servers?limit=5', { 'if-none-match': first.etag as string })).status).toBe(304);
    expect((await get('/v0.1/servers?limit=6', { 'if-none-match': first.etag as string })).status).toBe(200);
  });

  it('with a token, answers only a request with that bearer token', async () => {
    expect((await get('/v0.1/servers', {}, locked.url)).status).toBe(401);
    expect((await get('/v0.1/servers', { authorization: 'Bearer wrong' }, locked.url)).status).toBe(401);
    expect((await get('/v0.1/servers', { authorization: `Bearer ${TOKEN}` }, locked.url)).status).toBe(200);
  });

  it("is read back by Moat's API client: the listing, a search, versions and one version", async () => {
    const client = new RegistryApiClient(`${open.url}/v0.1`, { allowPrivateIp: true });
    const all = await client.listServers({ version: 'latest' });
    expect(all.skipped).toEqual([]);
    expect(all.entries.map((e) => e.server.name)).toEqual(names);
    expect((await client.listServers({ search: 'fetch' })).entries.map((e) => e.server.name)).toEqual([
      'io.github.modelcontextprotocol/fetch',
    ]);
    const versions = await client.versions('io.team/weather');
    expect(latestUsable(versions ?? [])).toMatchObject({ status: 'active', server: { version: '3.1.0' } });
    expect(await client.version('io.team/weather', '3.1.0')).toMatchObject({
      server: { name: 'io.team/weather' },
    });
    expect(await client.versions('io.none/x')).toBeUndefined();
    const withToken = new RegistryApiClient(locked.url, { allowPrivateIp: true, token: TOKEN });
    expect((await withToken.listServers()).entries).toHaveLength(names.length);
    await expect(new RegistryApiClient(locked.url, { allowPrivateIp: true }).listServers()).rejects.toThrow(
      'refused the request (HTTP 401); give its token in MOAT_REGISTRY_TOKEN',
    );
  });
});
