/**
 * An MCP Registry API as the user's registry, end to end with the real `moat` binary:
 * `moat registry serve` (a real process, with a bearer token) serving a team's registry file over
 * the catalog, and the spec-derived fixture of the official registry
 * (test/support/registry-api-fixture.ts) for deprecated and deleted entries and versions.
 * `moat run <name>` resolves through each and runs the npm build of the reference `everything`
 * server (the image the catalog test builds, from the real npm registry), called through the
 * proxy. Then the bad registries, each one line with its exit code, leaving nothing cached.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolBaseImage } from '../../support/build-images.js';
import {
  callTool,
  moat,
  moatHome,
  printedUrl,
  removeHome,
  spawnMoat,
  testMoatHome,
  toolNames,
} from '../../support/moat-cli.js';
import { startRegistryApiFixture, type RegistryApiFixture } from '../../support/registry-api-fixture.js';

const home = testMoatHome();
const HOST_CA_BUNDLE = process.env.MOAT_TEST_CA_BUNDLE ?? '/etc/ssl/certs/ca-certificates.crt';
const BUILD_TIMEOUT_MS = 540_000;
const TOKEN = 'team-registry-token-5150';
const WITH_TOKEN = { MOAT_REGISTRY_TOKEN: TOKEN };

let base: string;
let serve: ChildProcess;
let serveOutput = '';
let serveUrl: string;
let fixture: RegistryApiFixture;

const teamRegistry = {
  servers: [
    {
      name: 'io.team/team-everything',
      description: 'The reference everything server, from the team registry',
      version: '2026.8.31',
      packages: [
        {
          registryType: 'npm',
          identifier: '@modelcontextprotocol/server-everything',
          version: '2026.8.31',
          transport: { type: 'stdio' },
        },
      ],
      _meta: {
        'io.modelcontextprotocol.registry/publisher-provided': {
          'dev.moat': { tags: ['team'], permissions: 'none' },
        },
      },
    },
  ],
};

/** Starts `moat registry serve` and waits (bounded) for the URL it prints. */
async function startServe(): Promise<string> {
  const file = join(home, 'team.json');
  const tokenFile = join(home, 'token');
  writeFileSync(file, JSON.stringify(teamRegistry));
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  serve = spawnMoat(home, ['registry', 'serve', '--port', '0', '--file', file, '--token-file', tokenFile]);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no URL from moat registry serve: ${serveOutput}`)),
      60_000,
    );
    const read = (chunk: Buffer) => {
      serveOutput += chunk.toString();
      const url = /^(http:\/\/127\.0\.0\.1:\d+)$/m.exec(serveOutput)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    serve.stdout?.on('data', read);
    serve.stderr?.on('data', read);
    serve.once('exit', (code) => reject(new Error(`moat registry serve exited ${code}: ${serveOutput}`)));
  });
}

beforeAll(async () => {
  base = await protocolBaseImage();
  fixture = await startRegistryApiFixture();
  serveUrl = await startServe();
}, 900_000);

afterAll(async () => {
  if (serve?.exitCode === null) {
    const exited = new Promise((resolve) => serve.once('exit', resolve));
    serve.kill('SIGTERM');
    await exited;
  }
  await fixture?.close();
});

async function exported(name: string): Promise<Record<string, unknown>> {
  const file = join(home, `${name}.json`);
  expect((await moat(home, ['export', name, file])).code).toBe(0);
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

const BUILD_FLAGS = () => ['--runtime-image', base, '--ca-cert', HOST_CA_BUNDLE];

describe('moat registry serve as the registry API of a team', () => {
  it(
    'set-registry detects the API and needs its token; search, list, info and run go through it',
    async () => {
      expect(serveOutput).toContain('bearer token required');
      const refused = await moat(home, ['config', 'set-registry', serveUrl, '--allow-private-ip']);
      expect(refused).toMatchObject({
        code: 1,
        stderr: `Error: registry ${serveUrl} refused the request (HTTP 401); give its token in MOAT_REGISTRY_TOKEN\n`,
      });
      const set = await moat(
        home,
        ['config', 'set-registry', `${serveUrl}/v0.1`, '--allow-private-ip'],
        WITH_TOKEN,
      );
      expect(set).toMatchObject({ code: 0, stderr: `Registry set to ${serveUrl} (an MCP Registry API)\n` });
      expect((await moat(home, ['config', 'get-registry'])).stdout).toBe(
        `${serveUrl} (MCP Registry API, private addresses allowed)\n`,
      );

      const found = await moat(home, ['search', 'team', '--format', 'json'], WITH_TOKEN);
      expect(
        (JSON.parse(found.stdout) as { servers: Array<{ name: string }> }).servers.map((s) => s.name),
      ).toEqual(['io.team/team-everything']);
      const listed = await moat(home, ['registry', 'list'], WITH_TOKEN);
      expect(listed.stdout).toMatch(/^team-everything +io\.team\/team-everything +npx +The reference/m);
      expect(listed.stdout).toMatch(/^fetch +io\.github\.modelcontextprotocol\/fetch +uvx /m);
      const info = await moat(home, ['registry', 'info', 'team-everything@2026.8.31'], WITH_TOKEN);
      expect(info.stdout).toContain('Runs:        npx://@modelcontextprotocol/server-everything@2026.8.31');

      const run = await moat(home, ['run', ...BUILD_FLAGS(), 'team-everything'], WITH_TOKEN);
      expect(run.code, run.stderr).toBe(0);
      const url = printedUrl(run.stdout);
      expect(await toolNames(url)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      expect(await callTool(url, 'echo', { message: 'through the registry API' })).toContain(
        'through the registry API',
      );
      expect(await exported('team-everything')).toMatchObject({
        registry_server_name: 'io.team/team-everything',
        protocol_target: 'npx://@modelcontextprotocol/server-everything@2026.8.31',
        permission_profile: { name: 'none' },
      });
      expect(serveOutput).not.toContain(TOKEN);
    },
    BUILD_TIMEOUT_MS,
  );
});

describe('the official registry’s shape (spec-derived fixture)', () => {
  it(
    'deprecated runs with a warning, deleted is refused, versions are named',
    async () => {
      const set = await moat(home, ['config', 'set-registry', fixture.url, '--allow-private-ip']);
      expect(set.stderr).toBe(`Registry set to ${fixture.url} (an MCP Registry API)\n`);
      const info = await moat(home, ['registry', 'info', 'beta']);
      expect(info.stdout).toContain('Status:      deprecated (use io.fixture/delta)');

      const gone = await moat(home, ['run', 'gone']);
      expect(gone).toMatchObject({
        code: 2,
        stderr: 'Error: io.fixture/gone@1.0.0 is deleted in the registry: withdrawn; it is not run\n',
      });
      const noVersion = await moat(home, ['run', 'alpha@7.0.0']);
      expect(noVersion).toMatchObject({
        code: 2,
        stderr: 'Error: io.fixture/alpha has no version 7.0.0 in the registry (it has 1.1.0, 1.0.0)\n',
      });

      const run = await moat(home, ['run', ...BUILD_FLAGS(), 'beta']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(
        'Warning: io.fixture/beta@2.0.0 is deprecated in the registry: use io.fixture/delta\n',
      );
      expect(await toolNames(printedUrl(run.stdout))).toEqual(expect.arrayContaining(['echo']));
      expect(fixture.problems).toEqual([]);
      expect((await moat(home, ['config', 'unset-registry'])).code).toBe(0);
    },
    BUILD_TIMEOUT_MS,
  );
});

describe('bad registries: one line, exit 2 for a URL that is no registry, 1 at run time; nothing cached', () => {
  it('moat registry serve refuses a bad port or token file with exit 2', async () => {
    expect(await moat(home, ['registry', 'serve', '--port', '70000'])).toMatchObject({
      code: 2,
      stderr: 'Error: --port 70000: expected a port number from 0 to 65535\n',
    });
    const empty = join(home, 'empty-token');
    writeFileSync(empty, '\n');
    expect(await moat(home, ['registry', 'serve', '--port', '0', '--token-file', empty])).toMatchObject({
      code: 2,
      stderr: `Error: --token-file ${empty}: expected one token (no spaces)\n`,
    });
  });

  it('a web page, a looping cursor, an oversized page, a server that does not answer', async () => {
    const bad = moatHome();
    try {
      fixture.mode = 'html';
      const page = await moat(bad, ['config', 'set-registry', fixture.url, '--allow-private-ip']);
      expect(page.code).toBe(2);
      expect(page.stderr).toMatch(
        /^Error: http:\/\/127\.0\.0\.1:\d+ is neither an MCP Registry API \(.*did not answer JSON.*\) nor a registry file \(registry .* is not valid JSON .*\)\n$/,
      );
      fixture.mode = 'normal';
      expect((await moat(bad, ['config', 'set-registry', fixture.url, '--allow-private-ip'])).code).toBe(0);

      fixture.mode = 'loop';
      expect(await moat(bad, ['registry', 'list'])).toMatchObject({
        code: 1,
        stderr: `Error: registry ${fixture.url} repeated the page cursor "the-same-cursor"; stopped\n`,
      });
      fixture.mode = 'huge';
      const huge = await moat(bad, ['search', 'alpha']);
      expect(huge.code).toBe(1);
      expect(huge.stderr).toMatch(
        /^Error: registry http:\/\/127\.0\.0\.1:\d+\/v0\.1\/servers\?\S+ is larger than 8388608 bytes\n$/,
      );
      fixture.mode = 'slow';
      const slow = await moat(bad, ['registry', 'info', 'io.fixture/alpha']);
      expect(slow.code).toBe(1);
      expect(slow.stderr).toMatch(/^Error: registry http:\/\/\S+ unreachable: no answer within 10 s\n$/);
      expect(existsSync(join(bad, 'cache', 'registry'))).toBe(false);
    } finally {
      fixture.mode = 'normal';
      removeHome(bad);
    }
  }, 120_000);
});
