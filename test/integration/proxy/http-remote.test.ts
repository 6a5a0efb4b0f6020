/**
 * Remote URL backends (`moat run <URL>`): every request goes to the remote URL's path and query,
 * outbound credentials come from UpstreamAuth (refreshed once on a 401), and the client's own
 * Authorization header never leaves the proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';
import type { UpstreamAuth } from '../../../src/auth/outbound/types.js';
import type { Identity } from '../../../src/mcp/identity.js';

describe('a remote streamable-HTTP server behind the proxy', () => {
  let current = 'token-1';
  let backend: HttpBackendServer;
  let proxy: RunningProxy;
  const identities: Identity[] = [];
  const challenges: Array<string | undefined> = [];
  let refreshes = 0;
  let issued = 'token-1';
  let canRefresh = true;
  const auth: UpstreamAuth = {
    headers: (identity) => {
      identities.push(identity);
      return Promise.resolve({ authorization: `Bearer ${issued}` });
    },
    onUnauthorized: (challenge) => {
      challenges.push(challenge);
      if (!canRefresh) return Promise.resolve(false);
      refreshes++;
      issued = current;
      return Promise.resolve(true);
    },
  };

  beforeAll(async () => {
    backend = await startV1StreamableBackend({ bearer: () => current });
    proxy = await startProxy(
      testConfig({ remote_url: `${backend.url}?tenant=acme` }),
      { kind: 'http', url: `${backend.url}?tenant=acme`, transport: 'streamable-http', remote: true },
      { logger: memoryLogger().logger, upstreamAuth: auth },
    );
  });
  afterAll(async () => {
    await proxy.close();
    await backend.close();
  });

  it('sends every request to the remote path and query with the upstream credentials only', async () => {
    const client = new ClientV2({ name: 'remote', version: '1' });
    await client.connect(
      new TransportV2(new URL(`${proxy.url}/?client=1`), {
        requestInit: { headers: { authorization: 'Bearer client-secret' } },
      }),
    );
    const result = await client.callTool({ name: 'echo', arguments: { text: 'far away' } });
    expect(result.content).toEqual([{ type: 'text', text: 'far away' }]);
    await client.close();
    expect(backend.seen.length).toBeGreaterThan(2);
    for (const r of backend.seen) {
      expect(r.url).toBe('/mcp?tenant=acme&client=1');
      expect(r.headers.authorization).toBe('Bearer token-1');
      expect(r.headers['x-forwarded-for']).toBeUndefined();
    }
    expect(identities.every((i) => i.local)).toBe(true);
  });

  it('retries once with fresh credentials after a 401', async () => {
    current = 'token-2';
    const res = await post(`${proxy.url}/`, INIT_BODY);
    expect(res.status).toBe(200);
    expect(refreshes).toBe(1);
    expect(challenges).toEqual(['Bearer realm="backend"']);
    expect(backend.seen.at(-1)?.headers.authorization).toBe('Bearer token-2');
  });

  it('answers 502 (not a challenge for the backend) when the backend keeps refusing', async () => {
    current = 'token-3';
    canRefresh = false;
    const res = await post(`${proxy.url}/`, INIT_BODY);
    expect(res.status).toBe(502);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(res.json).toMatchObject({ error: { code: -32000, message: expect.stringContaining('401') } });
  });
});

describe('redirects from an HTTP backend', () => {
  let backend: HttpBackendServer;
  beforeAll(async () => {
    backend = await startV1StreamableBackend();
  });
  afterAll(() => backend.close());

  async function proxyFor(path: string): Promise<RunningProxy> {
    const url = backend.url.replace('/mcp', path);
    return startProxy(
      testConfig({ remote_url: url }),
      { kind: 'http', url, transport: 'streamable-http', remote: true },
      { logger: memoryLogger().logger },
    );
  }

  it('follows a 307/308 within the backend origin, keeping method and body', async () => {
    const proxy = await proxyFor('/moved');
    try {
      const res = await post(`${proxy.url}/`, INIT_BODY);
      expect(res.status).toBe(200);
      expect(res.headers.get('mcp-session-id')).toBeTruthy();
      expect(res.headers.get('location')).toBeNull();
    } finally {
      await proxy.close();
    }
  });

  it('refuses a redirect to another origin with 502 instead of sending the client around the proxy', async () => {
    const proxy = await proxyFor('/away');
    try {
      const res = await post(`${proxy.url}/`, INIT_BODY);
      expect(res.status).toBe(502);
      expect(res.headers.get('location')).toBeNull();
      expect(res.json).toMatchObject({
        error: { code: -32000, message: expect.stringContaining('redirect') },
      });
    } finally {
      await proxy.close();
    }
  });
});
