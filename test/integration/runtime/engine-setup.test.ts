/**
 * A container engine whose set-up cannot give a workload what it needs is named at `moat run`,
 * with the fix, instead of the workload being reported `running`. Each case runs a second, real
 * Podman API service whose containers.conf differs from the test run's in one setting.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRuntime } from '../../../src/runtime/connect.js';
import { testServerImage } from '../../support/images.js';
import { moat, testMoatHome, workload } from '../../support/moat-cli.js';
import { CONTAINERS_CONF, startPodmanApi, uniqueName, type PodmanService } from '../../support/podman.js';

const home = testMoatHome();
const confDir = mkdtempSync(join(tmpdir(), 'moat-engine-setup-'));
const services: PodmanService[] = [];

/** The test run's containers.conf with `setting` replaced (or removed when `value` is undefined). */
function confWith(file: string, setting: string, value?: string): string {
  const lines = readFileSync(CONTAINERS_CONF, 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith(`${setting} =`));
  const at = lines.findIndex((line) => line === '[network]');
  if (value !== undefined) lines.splice(at + 1, 0, `${setting} = ${value}`);
  const path = join(confDir, file);
  writeFileSync(path, lines.join('\n'));
  return path;
}

async function podmanWith(file: string, setting: string, value?: string): Promise<string> {
  const service = await startPodmanApi(confWith(file, setting, value));
  services.push(service);
  return service.socketPath;
}

let cniSocket: string;
let ulimitsSocket: string;
let httpImage: string;
let stdioImage: string;

beforeAll(async () => {
  [cniSocket, ulimitsSocket, httpImage, stdioImage] = await Promise.all([
    podmanWith('cni.conf', 'network_backend', '"cni"'),
    podmanWith('ulimits.conf', 'default_ulimits'),
    testServerImage('http-server'),
    testServerImage('stdio-server'),
  ]);
});

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop()));
  rmSync(confDir, { recursive: true, force: true });
});

describe('an engine that cannot do what the workload needs', { timeout: 180_000 }, () => {
  it('Podman on CNI: isolated workloads run (their sandbox needs no internal network, DNS or gateway)', async () => {
    const http = uniqueName('cni-none');
    const httpRun = await moat(
      home,
      ['run', '--name', http, '--transport', 'streamable-http', '--permission-profile', 'none', httpImage],
      { MOAT_RUNTIME_SOCKET: cniSocket },
    );
    expect(httpRun.stderr).not.toMatch(/\n\s+at /);
    expect(httpRun.code).toBe(0);
    expect((await workload(home, http))?.status).toBe('running');

    const stdio = uniqueName('cni-allow');
    const profile = join(confDir, 'allowlist.json');
    writeFileSync(
      profile,
      JSON.stringify({ network: { outbound: { allow_host: ['example.com'], allow_port: [443] } } }),
    );
    const stdioRun = await moat(
      home,
      ['run', '--name', stdio, '--transport', 'stdio', '--permission-profile', profile, stdioImage],
      { MOAT_RUNTIME_SOCKET: cniSocket },
    );
    expect(stdioRun.code).toBe(0);
    expect((await workload(home, stdio))?.status).toBe('running');
    for (const name of [http, stdio]) await moat(home, ['rm', name], { MOAT_RUNTIME_SOCKET: cniSocket });
    const runtime = await connectRuntime({ MOAT_RUNTIME_SOCKET: cniSocket });
    expect(await runtime.inspectContainer(`${http}-egress`)).toBeUndefined();
  });

  it('Podman with default ulimits this machine refuses: the run fails naming `default_ulimits = []`', async () => {
    const name = uniqueName('ulimits');
    const result = await moat(home, ['run', '--name', name, '--transport', 'stdio', stdioImage], {
      MOAT_RUNTIME_SOCKET: ulimitsSocket,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error setting rlimit');
    expect(result.stderr).toContain('`default_ulimits = []` under [containers]');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('the test run’s own Podman (netavark) runs the none-profile HTTP server', async () => {
    const name = uniqueName('netavark-none');
    const result = await moat(home, [
      'run',
      '--name',
      name,
      '--transport',
      'streamable-http',
      '--permission-profile',
      'none',
      httpImage,
    ]);
    expect(result.stderr).not.toContain('netavark');
    expect(result.code).toBe(0);
    expect((await workload(home, name))?.status).toBe('running');
  });
});
