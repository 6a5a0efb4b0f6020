import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REGISTRY_BYTES, checkRegistryUrl } from './guarded-fetch.js';
import { configuredRegistry, loadRegistry, saveRegistry } from './source.js';

const doc = JSON.stringify({ servers: [{ name: 'io.test/a', description: 'A' }] });
let dir: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'moat-registry-source-'));
  // A real HTTP server on loopback: the registry, an error, a redirect and an oversized answer.
  server = createServer((req, res) => {
    if (req.url === '/ok.json') return void res.writeHead(200).end(doc);
    if (req.url === '/moved') return void res.writeHead(302, { location: '/ok.json' }).end();
    if (req.url === '/huge') {
      res.writeHead(200);
      return void res.end(Buffer.alloc(MAX_REGISTRY_BYTES + 1, 32));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('registry sources', () => {
  it('keeps the rest of config.yaml when setting and unsetting the registry', async () => {
    const env = { MOAT_HOME: dir };
    const config = join(dir, 'config', 'config.yaml');
    await saveRegistry({ location: '/r.json', allowPrivateIp: false }, env);
    writeFileSync(config, `secrets:\n  provider: environment\n${readFileSync(config, 'utf8')}`);
    await saveRegistry({ location: 'https://r.example/r.json', allowPrivateIp: true }, env);
    expect(await configuredRegistry(env)).toEqual({
      location: 'https://r.example/r.json',
      allowPrivateIp: true,
    });
    await saveRegistry(undefined, env);
    expect(await configuredRegistry(env)).toBeUndefined();
    expect(readFileSync(config, 'utf8')).toContain('provider: environment');
  });

  it('applies the URL rules: https, http only on loopback, private addresses only when allowed', () => {
    expect(() => checkRegistryUrl('http://r.example/r.json', true)).toThrow(
      'must use https (plain http only on loopback)',
    );
    expect(() => checkRegistryUrl('https://10.1.2.3/r.json', false)).toThrow('points at a private address');
    expect(() => checkRegistryUrl('https://[::1]/r.json', false)).toThrow('--allow-private-ip');
    expect(checkRegistryUrl('https://10.1.2.3/r.json', true).hostname).toBe('10.1.2.3');
    expect(checkRegistryUrl('https://r.example/r.json', false).hostname).toBe('r.example');
  });

  it('loads a registry over HTTP, and refuses errors, redirects and oversized answers', async () => {
    const at = (path: string) => loadRegistry({ location: `${base}${path}`, allowPrivateIp: true });
    expect((await at('/ok.json')).map((s) => s.name)).toEqual(['io.test/a']);
    await expect(at('/missing')).rejects.toThrow('answered HTTP 404');
    await expect(at('/moved')).rejects.toThrow(/unreachable/);
    await expect(at('/huge')).rejects.toThrow(`is larger than ${MAX_REGISTRY_BYTES} bytes`);
    await expect(loadRegistry({ location: `${base}/ok.json`, allowPrivateIp: false })).rejects.toThrow(
      'points at a private address',
    );
  });

  it('reads a registry file and names a bad one', async () => {
    const file = join(dir, 'r.json');
    writeFileSync(file, doc);
    expect(await loadRegistry({ location: file, allowPrivateIp: false })).toHaveLength(1);
    writeFileSync(file, '{ not json');
    await expect(loadRegistry({ location: file, allowPrivateIp: false })).rejects.toThrow(
      `registry ${file} is not valid JSON`,
    );
    await expect(loadRegistry({ location: join(dir, 'none.json'), allowPrivateIp: false })).rejects.toThrow(
      'cannot read registry',
    );
  });
});
