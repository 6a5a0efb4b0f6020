import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverAuthorizationServer } from './discovery.js';

/** A loopback server publishing RFC 8414 metadata whose `issuer` is set per test. */
let server: Server;
let origin: string;
let published: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (!req.url?.startsWith('/.well-known/oauth-authorization-server')) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ issuer: published, token_endpoint: `${origin}/token` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('RFC 8414 §3.3: the metadata names exactly the issuer it was fetched for', () => {
  it('accepts the identical issuer', async () => {
    published = origin;
    expect((await discoverAuthorizationServer(origin))?.metadata.issuer).toBe(origin);
  });

  // Values are made inside the test: the server's port is known only after beforeAll.
  it.each([
    ['fetched with a trailing slash the metadata lacks', () => `${origin}/`, () => origin],
    ['published with a trailing slash the issuer lacks', () => origin, () => `${origin}/`],
    ['another host', () => origin, () => 'http://localhost:1'],
  ])('refuses %s, naming both values', async (_case, asked, publishes) => {
    published = publishes();
    const issuer = asked();
    await expect(discoverAuthorizationServer(issuer)).rejects.toThrow(
      `names issuer ${JSON.stringify(published)}, but it was fetched for issuer ${JSON.stringify(issuer)}; RFC 8414 §3.3 requires them to be identical`,
    );
  });

  it('lets a 2025-03-26 server (legacy discovery at its origin) name a path below it', async () => {
    published = `${origin}/tenant`;
    expect((await discoverAuthorizationServer(origin, fetch, { legacy: true }))?.metadata.issuer).toBe(
      published,
    );
  });
});
