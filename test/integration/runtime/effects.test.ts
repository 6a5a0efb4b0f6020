/**
 * What a container built from a RunConfig really gets, checked from inside with the fixture
 * server's tools: environment, mounts, capabilities, published ports, network modes and the
 * permission profiles' network rules.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { callResult, callText } from '../../fixtures/pipes-client.js';
import { freePort } from '../../support/ports.js';
import { Harness, uniqueName } from './harness.js';

let harness: Harness;
/** The default Podman bridge's gateway: the host as seen from a bridged container. */
let gateway: string;
/** TCP servers on the host: on the bridge gateway address and on loopback only. */
let gatewayPort: number;
let loopbackPort: number;

beforeAll(async () => {
  harness = await Harness.create();
  gateway = await harness.bridgeGateway();
  gatewayPort = await harness.listenOnHost(gateway);
  loopbackPort = await harness.listenOnHost('127.0.0.1');
});

afterAll(async () => {
  await harness.cleanup();
});

describe('environment', () => {
  it('passes the resolved environment and the transport variables', async () => {
    const { client } = await harness.launch({}, { GREETING: 'hello world', QUOTED: 'a=b "c"' });
    expect(await callText(client, 'get_env', { name: 'GREETING' })).toBe('hello world');
    expect(await callText(client, 'get_env', { name: 'QUOTED' })).toBe('a=b "c"');
    expect(await callText(client, 'get_env', { name: 'MCP_TRANSPORT' })).toBe('stdio');
    expect((await callResult(client, 'get_env', { name: 'MCP_PORT' })).isError).toBe(true);
  });
});

describe('mounts', () => {
  it('mounts read entries read-only, write entries and -v read-write, and the host sees writes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'moat-mounts-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const readDir = join(root, 'ro');
    const writeDir = join(root, 'rw');
    const volumeDir = join(root, 'vol');
    for (const dir of [readDir, writeDir, volumeDir]) mkdirSync(dir);
    writeFileSync(join(readDir, 'in.txt'), 'from the host');
    const { client } = await harness.launch({
      permission_profile: { read: [`${readDir}:/ro`], write: [`${writeDir}:/rw`], network: { outbound: {} } },
      volumes: [`${volumeDir}:/vol`, `${readDir}:/ro2:ro`],
    });
    expect(await callText(client, 'read_file', { path: '/ro/in.txt' })).toBe('from the host');
    expect(await callResult(client, 'write_file', { path: '/ro/new.txt', content: 'x' })).toEqual({
      text: 'EROFS',
      isError: true,
    });
    expect(await callResult(client, 'write_file', { path: '/ro2/new.txt', content: 'x' })).toEqual({
      text: 'EROFS',
      isError: true,
    });
    expect(existsSync(join(readDir, 'new.txt'))).toBe(false);
    expect(await callText(client, 'write_file', { path: '/rw/out.txt', content: 'written inside' })).toBe(
      'ok',
    );
    expect(readFileSync(join(writeDir, 'out.txt'), 'utf8')).toBe('written inside');
    expect(await callText(client, 'write_file', { path: '/vol/v.txt', content: 'volume' })).toBe('ok');
    expect(readFileSync(join(volumeDir, 'v.txt'), 'utf8')).toBe('volume');
  });

  it('names a missing host path before the engine does', async () => {
    await expect(harness.launch({ volumes: ['/nonexistent/moat-test-path:/x'] })).rejects.toMatchObject({
      kind: 'usage',
      message: expect.stringContaining('volume source path does not exist: /nonexistent/moat-test-path'),
    });
  });
});

describe('privileges', () => {
  it('drops every capability and sets no-new-privileges', async () => {
    const { client } = await harness.launch();
    const who = JSON.parse(await callText(client, 'whoami')) as Record<string, unknown>;
    expect(who).toMatchObject({ capEff: '0000000000000000', noNewPrivs: '1' });
  });
});

describe('published ports', () => {
  it('publishes the target port on 127.0.0.1 and adds -p bindings reachable from the host', async () => {
    const hostPort = await freePort();
    const { client, id } = await harness.launch({
      transport: 'streamable-http',
      target_port: 8080,
      publish: [`${hostPort}:8080`],
    });
    expect(await callText(client, 'echo', { text: 'over http' })).toBe('over http');
    const info = await harness.runtime.inspectContainer(id);
    const bindings = info!.ports.filter((p) => p.containerPort === 8080);
    expect(bindings.every((b) => b.hostIp === '127.0.0.1')).toBe(true);
    expect(bindings.map((b) => b.hostPort)).toContain(hostPort);
    expect(bindings).toHaveLength(2);
    const response = await fetch(`http://127.0.0.1:${hostPort}/mcp`, { method: 'GET' });
    // The server answered on the -p port (a GET without a session is refused, but by the server).
    expect([400, 405, 406]).toContain(response.status);
    expect(await callText(client, 'get_env', { name: 'MCP_HOST' })).toBe('0.0.0.0');
  });
});

describe('networks and permission profiles', () => {
  it('network profile on the default bridge: the server can reach the host through the gateway', async () => {
    const { client, spec } = await harness.launch({ permission_profile_name_or_path: 'network' });
    expect(spec.networkMode).toBe('bridge');
    expect(await callText(client, 'try_connect', { host: gateway, port: gatewayPort })).toBe('connected');
  });

  it('none profile, stdio server: no network at all', async () => {
    const { client, spec } = await harness.launch({ permission_profile_name_or_path: 'none' });
    expect(spec.networkMode).toBe('none');
    expect(await callText(client, 'try_connect', { host: gateway, port: gatewayPort })).toBe('ENETUNREACH');
    expect(await callText(client, 'try_connect', { host: '192.0.2.1', port: 443 })).toBe('ENETUNREACH');
  });

  it('none profile, HTTP server: reachable by the proxy through its sandbox, but no route out', async () => {
    const { client, spec, id } = await harness.launch({
      transport: 'streamable-http',
      target_port: 8080,
      permission_profile_name_or_path: 'none',
    });
    expect(spec.sandbox).toMatchObject({ allowAll: false, allowHosts: [], allowPorts: [] });
    expect(await callText(client, 'echo', { text: 'sandboxed' })).toBe('sandboxed');
    expect(await callText(client, 'try_connect', { host: gateway, port: gatewayPort })).toBe('ENETUNREACH');
    expect(await callText(client, 'try_connect', { host: '192.0.2.1', port: 443 })).toBe('ENETUNREACH');
    expect(await callText(client, 'proxy_connect', { host: gateway, port: gatewayPort })).toBe('403');
    await harness.runtime.removeContainer(id);
    expect(await harness.runtime.inspectContainer(`${spec.name}-egress`)).toBeUndefined();
  });

  it('--network none: no network even with the network profile', async () => {
    const { client } = await harness.launch({
      permission_profile: { network: { mode: 'none', outbound: { insecure_allow_all: true } } },
    });
    expect(await callText(client, 'try_connect', { host: gateway, port: gatewayPort })).toBe('ENETUNREACH');
  });

  it('--network host: the server shares the host network (reaches a loopback-only host server)', async () => {
    const { client } = await harness.launch({
      permission_profile: { network: { mode: 'host', outbound: { insecure_allow_all: true } } },
    });
    expect(await callText(client, 'try_connect', { host: '127.0.0.1', port: loopbackPort })).toBe(
      'connected',
    );
  });

  it('a named network: the container joins it; a missing one is a clear error', async () => {
    const network = uniqueName('moat-net');
    await harness.runtime.ensureNetwork(network, { internal: false, labels: { moat: 'true' } });
    try {
      const { id } = await harness.launch({
        permission_profile: { network: { mode: network, outbound: { insecure_allow_all: true } } },
      });
      const info = await harness.runtime.inspectContainer(id);
      expect(Object.keys(info!.ipAddresses)).toEqual([network]);
      await harness.runtime.removeContainer(id);
    } finally {
      await harness.runtime.removeNetwork(network);
    }
    await expect(
      harness.launch({
        permission_profile: { network: { mode: network, outbound: { insecure_allow_all: true } } },
      }),
    ).rejects.toMatchObject({
      kind: 'usage',
      message: expect.stringContaining(`network ${network} does not exist`),
    });
  });
});
