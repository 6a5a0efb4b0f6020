/**
 * `moat run npx://…`, `uvx://…`, `go://…` and `go://./path` end to end: real packages from the
 * real npm registry, PyPI and Go module proxy, built through the Podman API, run as stdio
 * servers, and called through Moat's proxy with the MCP SDK client.
 *
 * Docker Hub is out of reach here, so every build uses the test base image
 * (test/support/build-images.ts) through --runtime-image (and MOAT_BUILD_RUNTIME_IMAGE_GO for
 * Go's runtime stage). That image trusts Debian's CA roots only; this machine reaches the
 * registries through a TLS-inspecting proxy, so --ca-cert with the host's bundle is what makes
 * the builds work (the test without it proves the flag does something).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILD_LABEL } from '../../../src/runtime/build/build.js';
import { protocolBaseImage } from '../../support/build-images.js';
import { podmanCli } from '../../support/podman.js';
import {
  callTool,
  MOAT_MAIN,
  moat,
  moatOk,
  moatEnv,
  printedUrl,
  testMoatHome,
  toolNames,
  type MoatResult,
} from '../../support/moat-cli.js';

const home = testMoatHome();
const HOST_CA_BUNDLE = process.env.MOAT_TEST_CA_BUNDLE ?? '/etc/ssl/certs/ca-certificates.crt';
const GO_FIXTURE = fileURLToPath(new URL('../../fixtures/go-server/', import.meta.url));
const BUILD_TIMEOUT_MS = 540_000;

const NPX_EVERYTHING = 'npx://@modelcontextprotocol/server-everything@2026.8.31';
const UVX_TIME = 'uvx://mcp-server-time@2026.10.19';
const GO_HELLO = 'go://github.com/modelcontextprotocol/go-sdk/examples/server/hello@v1.8.0';
const GO_LOCAL = 'go://./cmd/echo-server';
let base: string;

beforeAll(async () => {
  base = await protocolBaseImage();
  // Images built by an earlier run would be reused: remove them, so every run really builds.
  // A local project is saved (and labelled) by absolute path.
  const goLocalSaved = `go://${join(GO_FIXTURE, 'cmd/echo-server')}`;
  for (const target of [NPX_EVERYTHING, UVX_TIME, GO_HELLO, goLocalSaved]) {
    const ids = await podmanCli(['images', '-q', '--filter', `label=${BUILD_LABEL}=${target}`]);
    const unique = [...new Set(ids.split('\n').filter(Boolean))];
    if (unique.length > 0) await podmanCli(['rmi', '-f', ...unique]);
  }
}, 900_000);

/** `moat run` with the test base image, in `cwd`; resolves with the exit code, output and time. */
function run(
  args: string[],
  options: { cwd?: string; caCert?: boolean } = {},
): Promise<MoatResult & { ms: number }> {
  const started = Date.now();
  const flags = ['run', '--transport', 'stdio', '--runtime-image', base];
  if (options.caCert !== false) flags.push('--ca-cert', HOST_CA_BUNDLE);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MOAT_MAIN, ...flags, ...args],
      {
        env: moatEnv(home, { MOAT_BUILD_RUNTIME_IMAGE_GO: base }),
        cwd: options.cwd ?? process.cwd(),
        maxBuffer: 16 * 1024 * 1024,
        timeout: BUILD_TIMEOUT_MS,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr, ms: Date.now() - started });
      },
    );
  });
}

async function runOk(
  args: string[],
  options: { cwd?: string } = {},
): Promise<{ url: string; stderr: string; ms: number }> {
  const result = await run(args, options);
  if (result.code !== 0)
    throw new Error(`moat run ${args.join(' ')} exited ${result.code}\n${result.stderr}`);
  return { url: printedUrl(result.stdout), stderr: result.stderr, ms: result.ms };
}

describe('protocol-scheme builds', () => {
  it(
    'npx:// builds an npm server, runs it, and a second run reuses the image without building',
    async () => {
      const first = await runOk(['--name', 'npx-everything', NPX_EVERYTHING]);
      expect(first.stderr).toMatch(/STEP \d+\/\d+: RUN .*npm install --save-exact/);
      expect(first.stderr).toMatch(
        /Built localhost\/moat-build\/npx-modelcontextprotocol-server-everything-[\w-]+:[0-9a-f]{16}/,
      );
      expect(await toolNames(first.url)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      // The runtime stage runs unprivileged and trusts the --ca-cert too.
      const image = /Built (\S+) for /.exec(first.stderr)?.[1] as string;
      expect(await podmanCli(['image', 'inspect', '--format', '{{.Config.User}}', image])).toBe(
        '10001:10001\n',
      );
      const bundle = await podmanCli([
        'run',
        '--rm',
        '--entrypoint',
        'cat',
        image,
        '/etc/ssl/certs/ca-certificates.crt',
      ]);
      const hostCa = readFileSync(HOST_CA_BUNDLE, 'utf8').trim().split('\n').slice(-3).join('\n');
      expect(bundle).toContain(hostCa);
      expect(await callTool(first.url, 'echo', { message: 'through moat' })).toContain('through moat');

      const second = await runOk(['--name', 'npx-everything-again', NPX_EVERYTHING]);
      expect(second.stderr).toContain('Using the image built before for ' + NPX_EVERYTHING);
      expect(second.stderr).not.toMatch(/STEP \d/);
      expect(await toolNames(second.url)).toContain('echo');
      // The numbers docs/builds.md quotes.
      console.log(`npx build: first run ${first.ms} ms, second run (cached image) ${second.ms} ms`);
      expect(second.ms).toBeLessThan(first.ms);

      // The exported RunConfig keeps the target and build options: --from-config reuses the image.
      const file = join(home, 'npx-everything.json');
      await moatOk(home, ['export', 'npx-everything', file]);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
        protocol_target: NPX_EVERYTHING,
        image,
        runtime_config: { builder_image: base, ca_cert_path: HOST_CA_BUNDLE },
      });
      await moatOk(home, ['rm', 'npx-everything']);
      const again = await moat(home, ['run', '--from-config', file]);
      expect(again.stderr).toContain(`Using the image built before for ${NPX_EVERYTHING}`);
      expect(await toolNames(printedUrl(again.stdout))).toContain('echo');
    },
    2 * BUILD_TIMEOUT_MS,
  );

  it.each([
    {
      what: 'uvx:// builds a PyPI server with a --build-with constraint',
      args: ['--build-with', 'tzdata>=2024.1', UVX_TIME],
      tools: ['convert_time', 'get_current_time'],
      call: ['get_current_time', { timezone: 'Europe/Paris' }, /"timezone": ?"Europe\/Paris"/],
    },
    {
      what: 'go:// builds a module from the Go module proxy',
      args: [GO_HELLO],
      tools: ['greet'],
      call: ['greet', { name: 'moat' }, /^Hi moat$/],
    },
    {
      what: 'go://./path builds the local Go project in the current directory',
      args: [GO_LOCAL],
      cwd: GO_FIXTURE,
      tools: ['echo'],
      call: ['echo', { text: 'local' }, /^go echo: local$/],
    },
  ] as const)(
    '$what, runs it and calls a tool through the proxy',
    async ({ args, tools, call, ...rest }) => {
      const name = `build-${args.at(-1)?.split('://')[0]}-${tools[0]}`;
      const { url, stderr } = await runOk(['--name', name, ...args], 'cwd' in rest ? { cwd: rest.cwd } : {});
      expect(stderr).toMatch(/\nBuilt localhost\/moat-build\/\S+ for /);
      expect((await toolNames(url)).sort()).toEqual(expect.arrayContaining([...tools]));
      const [tool, input, answer] = call;
      expect(await callTool(url, tool, input)).toMatch(answer);
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    'a package that does not exist fails with exit 1, the failing step and its last lines',
    async () => {
      const result = await run([
        '--name',
        'npx-missing',
        'npx://@moat-test-nonexistent/no-such-server@1.0.0',
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /failed at (\[\d\/\d\] )?STEP \d+\/\d+: RUN .*npm install --save-exact '@moat-test-nonexistent\/no-such-server@1.0.0'/,
      );
      expect(result.stderr).toContain('Last lines of the step:');
      expect(result.stderr).toMatch(/npm error (code E)?404/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    },
    BUILD_TIMEOUT_MS,
  );
});
