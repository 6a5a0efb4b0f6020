import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveRegistry } from '../registry/index.js';
import { MoatError } from '../util/errors.js';
import { fsBuildContext } from './run-build-context.js';
import { buildRunConfig } from './run-build.js';
import { parseRunArgv } from './run-command.js';
import { resolveRegistryTarget } from './run-registry.js';

// A MOAT_HOME without config.yaml: only the built-in catalog is read.
let home: string;
const previousHome = process.env.MOAT_HOME;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'moat-registry-unit-'));
  process.env.MOAT_HOME = home;
});
afterAll(() => {
  if (previousHome === undefined) delete process.env.MOAT_HOME;
  else process.env.MOAT_HOME = previousHome;
  rmSync(home, { recursive: true, force: true });
});

function ctx() {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // stdin is not a terminal: nothing is asked.
  return { io: { stdout: new PassThrough(), stderr }, stdin: new PassThrough(), warnings: () => text };
}

async function resolved(argv: string[]) {
  return resolveRegistryTarget(parseRunArgv(argv), ctx());
}

describe('moat run <registry name>', () => {
  it('turns a catalog entry into its build target with the entry as defaults', async () => {
    const parsed = await resolved(['time']);
    expect(parsed).toMatchObject({
      target: 'uvx://mcp-server-time@2026.10.19',
      registry: { server: 'io.github.modelcontextprotocol/time', permissions: 'none' },
      flags: { name: 'time', transport: 'stdio' },
      serverArgs: [],
    });
    const { config } = buildRunConfig(
      parsed,
      fsBuildContext(() => undefined),
    );
    expect(config).toMatchObject({
      registry_server_name: 'io.github.modelcontextprotocol/time',
      permission_profile: { name: 'none' },
      protocol_target: 'uvx://mcp-server-time@2026.10.19',
    });
  });

  it('lets flags and -- arguments override the entry', async () => {
    const parsed = await resolved([
      '--transport',
      'sse',
      '--name',
      'fs',
      '--permission-profile',
      'network',
      'filesystem',
      '--',
      '/data',
    ]);
    expect(parsed.flags).toMatchObject({ name: 'fs', transport: 'sse', permissionProfile: 'network' });
    expect(parsed.serverArgs).toEqual(['/data']);
    expect((await resolved(['filesystem'])).serverArgs).toEqual(['/projects']);
  });

  it('fills env defaults unless the user set the variable', async () => {
    expect((await resolved(['memory'])).flags.env).toEqual(['MEMORY_FILE_PATH=/tmp/memory.jsonl']);
    expect((await resolved(['-e', 'MEMORY_FILE_PATH=/m.json', 'memory'])).flags.env).toEqual([
      'MEMORY_FILE_PATH=/m.json',
    ]);
  });

  it('leaves images, URLs and packages alone, and names close servers for a bad name', async () => {
    for (const target of ['ghcr.io/acme/server:1', 'https://mcp.example.com/mcp', 'npx://pkg@1']) {
      expect((await resolved([target])).target).toBe(target);
    }
    const context = ctx();
    await resolveRegistryTarget(parseRunArgv(['fetc']), context);
    expect(context.warnings()).toContain(
      'fetc is not in the registry; running it as an image (did you mean fetch?)',
    );
    const error = await resolved(['Fetch!']).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(MoatError);
    expect((error as MoatError).message).toContain('did you mean fetch?');
  });

  it('names the flag for a required secret header without a terminal', async () => {
    await expect(resolved(['github'])).rejects.toThrow(
      'io.github.github/github needs the secret header Authorization: give it with ' +
        '--remote-forward-headers-secret Authorization=github-authorization, or store it once with ' +
        'moat secret set github-authorization',
    );
    const given = await resolved(['--remote-forward-headers-secret', 'Authorization=gh', 'github']);
    expect(given).toMatchObject({
      target: 'https://api.githubcopilot.com/mcp/',
      flags: { transport: 'streamable-http' },
    });
  });

  describe('with a user registry', () => {
    const provenance = { repository_uri: 'https://github.com/acme/w', cert_issuer: 'https://issuer.example' };
    beforeAll(async () => {
      const file = join(home, 'registry.json');
      writeFileSync(
        file,
        JSON.stringify({
          servers: [
            {
              name: 'io.acme/weather',
              description: 'weather',
              packages: [
                {
                  registryType: 'oci',
                  identifier: 'ghcr.io/acme/weather:1.0',
                  transport: { type: 'stdio' },
                  runtimeArguments: [
                    {
                      type: 'named',
                      name: '-e',
                      value: 'UNITS={units}',
                      variables: { units: { default: 'metric' } },
                    },
                  ],
                  packageArguments: [
                    {
                      type: 'named',
                      name: '--city',
                      value: '{city}',
                      variables: { city: { isRequired: true } },
                    },
                  ],
                },
              ],
              _meta: {
                'io.modelcontextprotocol.registry/publisher-provided': { 'dev.moat': { provenance } },
              },
            },
            {
              name: 'io.acme/leaky',
              description: 'a secret on the command line',
              packages: [
                {
                  registryType: 'npm',
                  identifier: 'leaky',
                  transport: { type: 'stdio' },
                  packageArguments: [
                    {
                      type: 'positional',
                      value: '--password={password}',
                      variables: { password: { isSecret: true, isRequired: true } },
                    },
                  ],
                },
              ],
            },
            {
              name: 'io.acme/team-hosted',
              description: 'hosted per team',
              remotes: [
                {
                  type: 'streamable-http',
                  url: 'https://teams.example/mcp',
                  headers: [
                    {
                      name: 'X-Team',
                      value: 'team-{team}',
                      variables: { team: { isRequired: true } },
                    },
                  ],
                },
              ],
            },
            {
              name: 'io.acme/hosted',
              description: 'hosted',
              remotes: [
                {
                  type: 'sse',
                  url: 'https://hosted.example/sse',
                  headers: [
                    {
                      name: 'Authorization',
                      value: 'Bearer {token}',
                      variables: { token: { isRequired: true, isSecret: true } },
                    },
                  ],
                },
              ],
            },
          ],
        }),
      );
      await saveRegistry({ location: file, allowPrivateIp: false });
    });
    afterAll(() => saveRegistry(undefined));

    it('carries the provenance and fills placeholders from --env and the defaults', async () => {
      const parsed = await resolved(['-e', 'city=Paris', 'weather']);
      expect(parsed).toMatchObject({
        target: 'ghcr.io/acme/weather:1.0',
        registry: { server: 'io.acme/weather', provenance },
        serverArgs: ['--city', 'Paris'],
      });
      expect(parsed.flags.env).toEqual(['city=Paris', 'UNITS=metric']);
    });

    it('names the flag for a required placeholder variable without a terminal', async () => {
      await expect(resolved(['weather'])).rejects.toThrow(
        'io.acme/weather needs the placeholder variable city: give it with --env city=…',
      );
      // Arguments after -- replace the entry's, so their placeholders are not needed.
      expect((await resolved(['weather', '--', '--city', 'Oslo'])).serverArgs).toEqual(['--city', 'Oslo']);
    });

    it('takes a header with a plain variable whole, and names the header flag when it is missing', async () => {
      await expect(resolved(['team-hosted'])).rejects.toThrow(
        'io.acme/team-hosted needs the placeholder variable team: give it with ' +
          '--remote-forward-headers X-Team=… (the whole value)',
      );
      const given = await resolved(['--remote-forward-headers', 'X-Team=team-blue', 'team-hosted']);
      expect(given.flags.remoteForwardHeaders).toEqual(['X-Team=team-blue']);
    });

    it('makes a header with a secret variable a secret header; refuses a secret variable in an argument', async () => {
      await expect(resolved(['hosted'])).rejects.toThrow(
        'io.acme/hosted needs the secret header Authorization: give it with ' +
          '--remote-forward-headers-secret Authorization=hosted-authorization, or store it once with ' +
          'moat secret set hosted-authorization',
      );
      const given = await resolved(['--remote-forward-headers-secret', 'Authorization=mine', 'hosted']);
      expect(given.flags.remoteForwardHeadersSecret).toEqual(['Authorization=mine']);
      expect(given.flags.remoteForwardHeaders).toEqual([]);
      await expect(resolved(['leaky'])).rejects.toThrow(
        'io.acme/leaky declares the placeholder variable password as secret; moat does not put secret values',
      );
    });
  });
});
