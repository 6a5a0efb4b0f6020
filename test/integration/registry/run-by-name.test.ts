/**
 * `moat run <name>` end to end: catalog entries built from the real npm registry and PyPI (one
 * of each), and a remote entry from a user registry served over HTTP on loopback. Only loopback
 * is reachable from the tests, so the "remote" server is a local MCP server (the real SDK's
 * streamable-HTTP server) standing in for a hosted one; the catalog's real remotes cannot be
 * reached here. Builds use the test base image and the host's CA bundle, as the protocol-build
 * tests do (test/integration/run/protocol-builds.test.ts explains why).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolBaseImage } from '../../support/build-images.js';
import { startV2StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { callTool, moat, moatOk, printedUrl, testMoatHome, toolNames } from '../../support/moat-cli.js';
import { moatOnPty } from '../../support/pty.js';

const home = testMoatHome();
const HOST_CA_BUNDLE = process.env.MOAT_TEST_CA_BUNDLE ?? '/etc/ssl/certs/ca-certificates.crt';
const BUILD_TIMEOUT_MS = 540_000;
const SECRETS = { MOAT_SECRETS_PASSWORD: 'registry-test-password' };
const TYPED_KEY = 'typed-api-key-4711';

let base: string;
let backend: HttpBackendServer;
let registryHttp: Server;
let registryUrl: string;

function remoteRegistry(): unknown {
  return {
    servers: [
      {
        name: 'io.moat-test/local-remote',
        description: 'A loopback MCP server standing in for a hosted one',
        remotes: [
          {
            type: 'streamable-http',
            url: backend.url,
            headers: [
              // Placeholders: the secret one makes the whole value a stored secret.
              {
                name: 'X-Api-Key',
                value: 'key={key}',
                variables: { key: { description: 'the API key', isRequired: true, isSecret: true } },
              },
              { name: 'X-Client', value: 'moat-{suite}', variables: { suite: { default: 'registry-test' } } },
            ],
          },
        ],
        _meta: {
          'io.modelcontextprotocol.registry/publisher-provided': { 'dev.moat': { tags: ['loopback'] } },
        },
      },
    ],
  };
}

beforeAll(async () => {
  base = await protocolBaseImage();
  backend = await startV2StreamableBackend();
  const body = JSON.stringify(remoteRegistry());
  registryHttp = createServer((req, res) => {
    if (req.url !== '/registry.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => registryHttp.listen(0, '127.0.0.1', resolve));
  registryUrl = `http://127.0.0.1:${(registryHttp.address() as AddressInfo).port}/registry.json`;
}, 900_000);

afterAll(async () => {
  await backend?.close();
  await new Promise((resolve) => registryHttp?.close(resolve));
});

async function exported(name: string): Promise<Record<string, unknown>> {
  const file = join(home, `${name}.json`);
  await moatOk(home, ['export', name, file]);
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

const BUILD_FLAGS = () => ['--runtime-image', base, '--ca-cert', HOST_CA_BUNDLE];

describe('moat run <catalog name>', () => {
  it(
    'everything (npm) builds through npx://, applies the entry and answers tools/list through the proxy',
    async () => {
      const stdout = await moatOk(home, ['run', ...BUILD_FLAGS(), 'everything']);
      const url = printedUrl(stdout);
      expect(await toolNames(url)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      expect(await callTool(url, 'echo', { message: 'by name' })).toContain('by name');
      expect(await exported('everything')).toMatchObject({
        name: 'everything',
        registry_server_name: 'io.github.modelcontextprotocol/everything',
        protocol_target: 'npx://@modelcontextprotocol/server-everything@2026.8.31',
        transport: 'stdio',
        permission_profile: { name: 'none' },
      });
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    'time (PyPI) builds through uvx:// and a tool call answers; a flag overrides the entry',
    async () => {
      const stdout = await moatOk(home, [
        'run',
        ...BUILD_FLAGS(),
        '--permission-profile',
        'network',
        'io.github.modelcontextprotocol/time',
      ]);
      const url = printedUrl(stdout);
      expect(await toolNames(url)).toEqual(expect.arrayContaining(['get_current_time', 'convert_time']));
      expect(await callTool(url, 'get_current_time', { timezone: 'Europe/Paris' })).toMatch(
        /"timezone": ?"Europe\/Paris"/,
      );
      const config = await exported('io-github-modelcontextprotocol-time');
      expect(config).toMatchObject({
        registry_server_name: 'io.github.modelcontextprotocol/time',
        protocol_target: 'uvx://mcp-server-time@2026.10.19',
        permission_profile: { name: 'network' },
      });
    },
    BUILD_TIMEOUT_MS,
  );

  it('an unknown name that is no image reference gets "did you mean", exit 2', async () => {
    const result = await moat(home, ['run', 'Everythng!']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'Error: "Everythng!" is not a registry server, image reference, protocol scheme or http(s) URL; did you mean everything?\n',
    );
  });
});

describe('user registries', () => {
  it('a registry file overrides the catalog entry of the same name', async () => {
    const file = join(home, 'override.json');
    writeFileSync(
      file,
      JSON.stringify({
        servers: [
          {
            name: 'io.github.modelcontextprotocol/time',
            description: 'Our pinned time server',
            packages: [
              {
                registryType: 'pypi',
                identifier: 'mcp-server-time',
                version: '2026.10.19',
                transport: { type: 'stdio' },
              },
            ],
          },
        ],
      }),
    );
    await moatOk(home, ['config', 'set-registry', file]);
    expect(await moatOk(home, ['config', 'get-registry'])).toBe(`${file}\n`);
    expect(await moatOk(home, ['registry', 'info', 'time'])).toContain('Description: Our pinned time server');
    const listed = JSON.parse(await moatOk(home, ['registry', 'list', '--format', 'json'])) as {
      servers: Array<{ name: string }>;
    };
    expect(listed.servers.map((s) => s.name)).toContain('io.github.modelcontextprotocol/fetch');

    writeFileSync(file, JSON.stringify({ servers: [{ name: 'time', description: 'x' }] }));
    const broken = await moat(home, ['registry', 'list']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^Error: invalid registry .*override\.json: field servers\[0\]\.name: /);
    await moatOk(home, ['config', 'unset-registry']);
    expect(await moatOk(home, ['config', 'get-registry'])).toBe('built-in catalog only (no registry set)\n');
  });

  it('a registry over HTTP on loopback: refused without --allow-private-ip, then its remote entry runs', async () => {
    const refused = await moat(home, ['config', 'set-registry', registryUrl]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('points at a private address');
    expect(refused.stderr).toContain('--allow-private-ip');
    await moatOk(home, ['config', 'set-registry', registryUrl, '--allow-private-ip']);
    const found = JSON.parse(await moatOk(home, ['search', 'loopback', '--format', 'json'])) as {
      servers: Array<{ name: string }>;
    };
    expect(found.servers.map((s) => s.name)).toEqual(['io.moat-test/local-remote']);

    // No terminal: the missing secret header is named with the flag that sets it.
    const missing = await moat(home, ['run', 'local-remote'], SECRETS);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      'Error: io.moat-test/local-remote needs the secret header X-Api-Key: give it with ' +
        '--remote-forward-headers-secret X-Api-Key=local-remote-x-api-key, or store it once with ' +
        'moat secret set local-remote-x-api-key\n',
    );

    // On a terminal it is asked for without echo, stored, and the run goes on.
    let prompted = false;
    const pty = await moatOnPty(['run', 'local-remote'], {
      home,
      env: SECRETS,
      keyboard: true,
      timeoutMs: 120_000,
      onOutput(output, type) {
        if (
          !/needs X-Api-Key \(the value of \{key\} in "key=\{key\}": the API key\) \(hidden\): $/.test(output)
        )
          return false;
        prompted = true;
        type(`${TYPED_KEY}\r`);
        return true;
      },
    });
    expect(pty.timedOut).toBe(false);
    expect(prompted).toBe(true);
    expect(pty.code).toBe(0);
    expect(pty.output).toContain('Stored X-Api-Key in the secrets manager as local-remote-x-api-key');
    expect(pty.output).not.toContain(TYPED_KEY);
    const url = printedUrl(pty.output);
    expect(await toolNames(url)).toEqual(expect.arrayContaining(['echo', 'add']));
    const toBackend = backend.seen.filter((r) => r.method === 'POST').at(-1);
    expect(toBackend?.headers['x-api-key']).toBe(`key=${TYPED_KEY}`);
    expect(toBackend?.headers['x-client']).toBe('moat-registry-test');

    // The stored secret serves the next run without a terminal.
    const again = await moat(home, ['run', '--name', 'local-remote-again', 'local-remote'], SECRETS);
    expect(again.stderr).not.toContain('needs');
    expect(again.code).toBe(0);
    expect(await callTool(printedUrl(again.stdout), 'add', { a: 2, b: 3 })).toBe('5');
    expect(await exported('local-remote-again')).toMatchObject({
      remote_url: backend.url,
      registry_server_name: 'io.moat-test/local-remote',
      header_forward: {
        add_plaintext_headers: { 'X-Client': 'moat-registry-test' },
        add_headers_from_secret: { 'X-Api-Key': 'local-remote-x-api-key' },
      },
    });
    await moatOk(home, ['config', 'unset-registry']);
  }, 180_000);
});
