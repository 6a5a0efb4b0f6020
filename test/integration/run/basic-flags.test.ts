/**
 * The basic `moat run` flags reach the container on real Podman through the real binary:
 * -e, --env-file, --env-file-dir (and their precedence), -l, -v (read-only), server arguments
 * after --, and the exported RunConfig keeps env-file values out. A RunConfig in ToolHive's shape
 * runs with --from-config.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRunConfigFile } from '../../../src/config/runconfig-file.js';
import { testServerImage } from '../../support/images.js';
import { testTempDir } from '../../support/temp-dir.js';
import { callTool, moatOk, printedUrl, testMoatHome } from '../../support/moat-cli.js';
import { podmanCli, testRuntime, uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();
const work = testTempDir('moat-run-flags-');

beforeAll(async () => {
  image = await testServerImage('stdio-server');
}, 300_000);

describe('basic run flags on a real container', { timeout: 300_000 }, () => {
  it('-e, env files, -l, -v and -- arguments reach the server', async () => {
    const name = uniqueName('flags');
    const envDir = join(work, 'env.d');
    mkdirSync(envDir);
    writeFileSync(join(envDir, 'base'), 'FROM_DIR=dir\nOVERRIDDEN=dir\n');
    writeFileSync(join(work, 'app.env'), 'FROM_FILE=file-secret-value\nOVERRIDDEN=file\nBY_FLAG=file\n');
    const data = join(work, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'hello.txt'), 'hello from the host');

    const out = await moatOk(home, [
      'run',
      '--transport',
      'stdio',
      '--name',
      name,
      '-e',
      'BY_FLAG=flag',
      '--env-file',
      join(work, 'app.env'),
      '--env-file-dir',
      envDir,
      '-l',
      'team=core',
      '-v',
      `${data}:/data:ro`,
      '--isolate-network=false',
      image,
      '--',
      '--server-flag',
      'value with spaces',
    ]);
    const url = printedUrl(out);

    expect(await callTool(url, 'get_env', { name: 'BY_FLAG' })).toBe('flag');
    expect(await callTool(url, 'get_env', { name: 'FROM_FILE' })).toBe('file-secret-value');
    expect(await callTool(url, 'get_env', { name: 'FROM_DIR' })).toBe('dir');
    expect(await callTool(url, 'get_env', { name: 'OVERRIDDEN' })).toBe('file');
    expect(await callTool(url, 'read_file', { path: '/data/hello.txt' })).toBe('hello from the host');
    expect(await callTool(url, 'write_file', { path: '/data/new.txt', content: 'x' })).toBe('EROFS');

    const runtime = await testRuntime();
    expect((await runtime.inspectContainer(name))?.labels).toMatchObject({ team: 'core' });
    const cmd = JSON.parse(
      await podmanCli(['inspect', '--format', '{{json .Config.Cmd}}', name]),
    ) as string[];
    expect(cmd).toEqual(['--server-flag', 'value with spaces']);

    const file = join(work, 'exported.json');
    await moatOk(home, ['export', name, file]);
    const exported = await readRunConfigFile(file);
    expect(exported).toMatchObject({
      env_vars: { BY_FLAG: 'flag' },
      env_file: join(work, 'app.env'),
      env_file_dir: envDir,
      volumes: [`${data}:/data:ro`],
      container_labels: { team: 'core' },
      cmd_args: ['--server-flag', 'value with spaces'],
      isolate_network: false,
    });
    expect(readFileSync(file, 'utf8')).not.toContain('file-secret-value');
    await moatOk(home, ['rm', name]);
  });

  it("runs a RunConfig written in ToolHive's shape with --from-config", async () => {
    const name = uniqueName('thv');
    const file = join(work, 'toolhive.json');
    writeFileSync(
      file,
      JSON.stringify({
        schema_version: 'v0.1.0',
        image,
        name,
        container_name: name,
        base_name: name,
        transport: 'stdio',
        host: '127.0.0.1',
        port: 0,
        permission_profile: { name: 'network', network: { outbound: { insecure_allow_all: true } } },
        env_vars: { MCP_TRANSPORT: 'stdio', GREETING: 'from toolhive' },
        container_labels: { toolhive: 'true', 'toolhive-name': name },
        proxy_mode: 'streamable-http',
        group: 'default',
        ignore_config: { LoadGlobal: true, PrintOverlays: false },
        middleware_configs: [
          { type: 'auth', parameters: {} },
          { type: 'mcp-parser', parameters: {} },
          { type: 'recovery', parameters: null },
        ],
      }),
    );
    const url = printedUrl(await moatOk(home, ['run', '--from-config', file]));
    expect(await callTool(url, 'get_env', { name: 'GREETING' })).toBe('from toolhive');
    await moatOk(home, ['rm', name]);
  });
});
