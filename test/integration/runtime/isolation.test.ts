/**
 * Network isolation on real Podman (`isolate_network: true`, as every `moat run` on a bridge
 * network sets it): the workload sits in its loopback-only sandbox and reaches the outside only
 * through its egress proxy, which enforces the profile and refuses the engine's gateway
 * addresses, in every spelling, even under insecure_allow_all; `allow_docker_gateway` lets
 * them through. The attacks run from inside the workload (the fixture server's tools).
 */
import { networkInterfaces } from 'node:os';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callText } from '../../fixtures/pipes-client.js';
import { podmanCli, uniqueName } from '../../support/podman.js';
import { Harness } from './harness.js';

let harness: Harness;
/** The default bridge's gateway: the host as the egress proxy sees it. */
let gateway: string;
/** A host service listening on the gateway address only. */
let hostPort: number;
/** Stand-in for the internet: a server in a container on the default bridge (no real network is used). */
let internet: { name: string; image: string; ip: string; port: number; otherPort: number };

/** The gateway address in the spellings an attacker would try; each one means the same host. */
function spellings(ip: string): string[] {
  const [a, b, c, d] = ip.split('.').map(Number) as [number, number, number, number];
  const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  const hex = n.toString(16).padStart(8, '0');
  return [
    ip,
    String(n),
    `0x${hex}`,
    `${a}.${(b << 16) + (c << 8) + d}`,
    `[::ffff:${ip}]`,
    `[::ffff:${hex.slice(0, 4)}:${hex.slice(4)}]`,
    'host.containers.internal',
    'host.docker.internal',
  ];
}

beforeAll(async () => {
  harness = await Harness.create();
  gateway = await harness.bridgeGateway();
  hostPort = await harness.listenOnHost(gateway);
  // The egress image has Node: good enough to serve as the stand-in on two ports.
  const { spec } = await harness.launch({ isolate_network: true });
  const image = (await harness.runtime.inspectContainer(`${spec.name}-egress`))!.image;
  const name = uniqueName('moat-standin-internet');
  const script =
    "const http=require('http');for(const p of [8443,8444])http.createServer((q,r)=>r.end('stand-in\\n')).listen(p)";
  await podmanCli(
    ['run', '-d', '--name', name, '--network', 'bridge', '--entrypoint', '/usr/local/bin/node'].concat([
      image,
      '-e',
      script,
    ]),
  );
  const ip = (await podmanCli(['inspect', '-f', '{{.NetworkSettings.IPAddress}}', name])).trim();
  internet = { name, image, ip, port: 8443, otherPort: 8444 };
});

afterAll(async () => {
  if (internet) await podmanCli(['rm', '-f', '-t', '0', internet.name]).catch(() => undefined);
  await harness.cleanup();
});

describe('network isolation', () => {
  it('refuses the gateway in every spelling under insecure_allow_all; nothing reaches the host directly', async () => {
    const { client, spec } = await harness.launch({ isolate_network: true });
    expect(spec.sandbox).toMatchObject({ allowAll: true, gateway: 'block' });
    for (const host of spellings(gateway))
      expect(`${host}: ${await callText(client, 'proxy_connect', { host, port: hostPort })}`).toBe(
        `${host}: 403`,
      );
    // The same service is up: the stand-in internet answers through the same proxy.
    expect(await callText(client, 'proxy_connect', { host: internet.ip, port: internet.port })).toBe('200');
    // No way around the proxy: only loopback in the sandbox.
    expect(await callText(client, 'try_connect', { host: gateway, port: hostPort })).toBe('ENETUNREACH');
    expect(await callText(client, 'try_connect', { host: internet.ip, port: internet.port })).toBe(
      'ENETUNREACH',
    );
    const decisions = await podmanCli(['logs', `${spec.name}-egress`]);
    expect(decisions).toContain(`"egress":"deny","method":"CONNECT","host":"${gateway}","port":${hostPort}`);
    // The snapshot: every engine gateway and every address of this host.
    const rules = decisions
      .split('\n')
      .map((line) => JSON.parse(line || '{}') as { egress?: string; gateways?: string[] })
      .find((line) => line.egress === 'rules');
    // This host's own (physical) addresses; bridges and veths come and go with other tests' containers.
    const hostAddresses = Object.entries(networkInterfaces())
      .filter(([name]) => /^(eth|en|wl)/.test(name))
      .flatMap(([, list]) => (list ?? []).filter((i) => i.family === 'IPv4').map((i) => i.address));
    expect(rules?.gateways).toEqual(expect.arrayContaining([gateway, ...hostAddresses]));
  });

  it('--allow-docker-gateway: the host service at the gateway is reachable, on any port', async () => {
    const { client, spec } = await harness.launch({
      isolate_network: true,
      allow_docker_gateway: true,
      permission_profile: {
        network: { outbound: { allow_host: [internet.ip], allow_port: [internet.port] } },
      },
    });
    expect(spec.sandbox).toMatchObject({ gateway: 'allow' });
    expect(await callText(client, 'proxy_connect', { host: gateway, port: hostPort })).toBe('200');
    expect(await callText(client, 'proxy_connect', { host: `[::ffff:${gateway}]`, port: hostPort })).toBe(
      '200',
    );
    // Other destinations still follow the profile.
    expect(await callText(client, 'proxy_connect', { host: internet.ip, port: internet.otherPort })).toBe(
      '403',
    );
  });

  it('an allowlist: the allowed host:port works; another port, another host and the gateway do not', async () => {
    const { client } = await harness.launch({
      isolate_network: true,
      permission_profile: {
        network: { outbound: { allow_host: [internet.ip, gateway], allow_port: [internet.port, hostPort] } },
      },
    });
    expect(await callText(client, 'proxy_connect', { host: internet.ip, port: internet.port })).toBe('200');
    expect(await callText(client, 'proxy_connect', { host: internet.ip, port: internet.otherPort })).toBe(
      '403',
    );
    expect(await callText(client, 'proxy_connect', { host: 'example.com', port: internet.port })).toBe('403');
    // Listing the gateway in the profile does not open it: only --allow-docker-gateway does.
    expect(await callText(client, 'proxy_connect', { host: gateway, port: hostPort })).toBe('403');
  });

  it('an HTTP server is reached through the published port of its egress proxy, and survives stop/start', async () => {
    const { client, spec, id } = await harness.launch({
      isolate_network: true,
      transport: 'streamable-http',
      target_port: 8080,
    });
    expect(spec.networkMode).toBe(`container:${spec.name}-relay`);
    expect(await callText(client, 'echo', { text: 'through the sandbox' })).toBe('through the sandbox');
    expect(await callText(client, 'proxy_connect', { host: gateway, port: hostPort })).toBe('403');
    // Node's own fetch goes out through the egress proxy too (NODE_USE_ENV_PROXY=1 in the sandbox
    // environment; without it fetch ignores HTTP_PROXY and gets ENETUNREACH).
    const page = `http://${internet.ip}:${internet.otherPort}/`;
    expect(await callText(client, 'fetch_text', { url: page })).toBe('200 stand-in');
    expect(await text(await harness.runtime.logs(`${spec.name}-egress`))).toMatch(
      new RegExp(`"egress":"allow","method":"[A-Z]+","host":"${internet.ip}","port":${internet.otherPort}`),
    );
    const info = await harness.runtime.inspectContainer(id);
    expect(info?.ports).toEqual([{ containerPort: 8080, hostIp: '127.0.0.1', hostPort: expect.any(Number) }]);

    await harness.runtime.stopContainer(id, 5);
    await harness.runtime.startContainer(id);
    const again = await harness.connectHttp(id, spec, 8080);
    expect(await callText(again, 'echo', { text: 'again' })).toBe('again');
    expect(await callText(again, 'proxy_connect', { host: internet.ip, port: internet.port })).toBe('200');

    await harness.runtime.removeContainer(id);
    for (const part of ['egress', 'relay'])
      expect(await harness.runtime.inspectContainer(`${spec.name}-${part}`)).toBeUndefined();
    expect(await podmanCli(['volume', 'ls', '-q'])).not.toContain(`moat-${spec.name}-sandbox`);
  });

  it('the egress proxy is no open proxy for other containers: it listens on a Unix socket only', async () => {
    const { spec } = await harness.launch({ isolate_network: true });
    const egressIp = (
      await podmanCli(['inspect', '-f', '{{.NetworkSettings.IPAddress}}', `${spec.name}-egress`])
    ).trim();
    const probe = await podmanCli([
      'run',
      '--rm',
      '--network',
      'bridge',
      '--entrypoint',
      '/usr/local/bin/node',
      internet.image,
      '-e',
      `require('net').connect(3128,'${egressIp}').on('connect',()=>{console.log('open');process.exit()}).on('error',e=>console.log(e.code))`,
    ]);
    expect(probe.trim()).toBe('ECONNREFUSED');
  });
});
