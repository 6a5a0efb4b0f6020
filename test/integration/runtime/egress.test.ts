/**
 * Outbound allowlists (allow_host/allow_port) on real Podman, without isolation (the bare
 * RunConfig's default, so the gateway counts as any host): the server sits in its loopback-only
 * sandbox and its only way out is the egress proxy container, which allows exactly the
 * profile's hosts and ports. isolation.test.ts covers the isolated case.
 */
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../../src/runtime/types.js';
import { callText } from '../../fixtures/pipes-client.js';
import { podmanCli } from '../../support/podman.js';
import { Harness } from './harness.js';

let harness: Harness;
let gateway: string;
let allowedPort: number;
let otherPort: number;

beforeAll(async () => {
  harness = await Harness.create();
  gateway = await harness.bridgeGateway();
  allowedPort = await harness.listenOnHost(gateway);
  otherPort = await harness.listenOnHost(gateway);
});

afterAll(async () => {
  await harness.cleanup();
});

const allowlist = () => ({
  network: { outbound: { allow_host: [gateway], allow_port: [allowedPort] } },
});

describe('egress allowlist', () => {
  it('lets a stdio server reach exactly the allowed host and port through the proxy, nothing directly', async () => {
    const { client, spec, id } = await harness.launch({ permission_profile: allowlist() });
    expect(spec).toMatchObject({
      networkMode: `container:${spec.name}-relay`,
      sandbox: { allowAll: false, allowHosts: [gateway], allowPorts: [allowedPort], gateway: 'profile' },
    });
    const egressName = `${spec.name}-egress`;
    expect(await callText(client, 'get_env', { name: 'HTTP_PROXY' })).toBe('http://127.0.0.1:3128');

    expect(await callText(client, 'proxy_connect', { host: gateway, port: allowedPort })).toBe('200');
    expect(await callText(client, 'proxy_connect', { host: gateway, port: otherPort })).toBe('403');
    expect(await callText(client, 'proxy_connect', { host: 'example.com', port: allowedPort })).toBe('403');
    // No way around the proxy: the sandbox has loopback only.
    expect(await callText(client, 'try_connect', { host: gateway, port: allowedPort })).toBe('ENETUNREACH');

    // The proxy is not a workload of its own, and it goes away with the workload.
    const egress = await harness.runtime.inspectContainer(egressName);
    expect(egress).toMatchObject({ running: true, labels: { [LABELS.egressFor]: spec.name } });
    expect((await harness.runtime.listContainers()).map((c) => c.name)).not.toContain(egressName);
    const decisions = await text(await harness.runtime.logs(egressName));
    expect(decisions).toContain(`"egress":"deny","method":"CONNECT","host":"${gateway}","port":${otherPort}`);

    await harness.runtime.removeContainer(id);
    expect(await harness.runtime.inspectContainer(egressName)).toBeUndefined();
    expect(await harness.runtime.inspectContainer(`${spec.name}-relay`)).toBeUndefined();
    expect(await podmanCli(['volume', 'ls', '-q'])).not.toContain(`moat-${spec.name}-sandbox`);
  });

  it('stops and starts the sandbox with the workload (an HTTP server, reached through the published port of its egress proxy)', async () => {
    const { client, spec, id } = await harness.launch({
      transport: 'streamable-http',
      target_port: 8080,
      permission_profile: allowlist(),
    });
    const egressName = `${spec.name}-egress`;
    expect(await callText(client, 'proxy_connect', { host: gateway, port: allowedPort })).toBe('200');

    await harness.runtime.stopContainer(id, 5);
    expect((await harness.runtime.inspectContainer(egressName))?.running).toBe(false);
    expect((await harness.runtime.inspectContainer(`${spec.name}-relay`))?.running).toBe(false);
    await harness.runtime.startContainer(id);
    expect((await harness.runtime.inspectContainer(egressName))?.running).toBe(true);
    const again = await harness.connectHttp(id, spec, 8080);
    expect(await callText(again, 'proxy_connect', { host: gateway, port: allowedPort })).toBe('200');
    expect(await callText(again, 'proxy_connect', { host: gateway, port: otherPort })).toBe('403');
  });

  it('replaces a sandbox left behind by the same workload', async () => {
    const { spec, id } = await harness.launch({ permission_profile: allowlist() });
    const egressName = `${spec.name}-egress`;
    const before = await harness.runtime.inspectContainer(egressName);
    // The workload's container disappears without moat (e.g. `podman rm -f`): its proxy stays.
    await podmanCli(['rm', '-f', '-t', '0', id]);
    expect((await harness.runtime.inspectContainer(egressName))?.id).toBe(before!.id);
    const again = await harness.launch({ name: spec.name, permission_profile: allowlist() });
    const after = await harness.runtime.inspectContainer(egressName);
    expect(after?.id).not.toBe(before!.id);
    expect(await callText(again.client, 'proxy_connect', { host: gateway, port: allowedPort })).toBe('200');
  });
});
