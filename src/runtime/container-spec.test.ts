import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, log, setLogger } from '../util/log.js';
import { runConfigSchema, type RunConfigInput } from '../config/runconfig.js';
import {
  buildContainerSpec,
  httpTarget,
  isolationDropped,
  parsePublish,
  validateLabel,
} from './container-spec.js';
import type { ContainerInfo } from './types.js';

function config(overrides: Partial<RunConfigInput> = {}) {
  return runConfigSchema.parse({
    image: 'localhost/server:1',
    name: 'srv',
    transport: 'stdio',
    host: '127.0.0.1',
    port: 4100,
    ...overrides,
  });
}

const info = (overrides: Partial<ContainerInfo>): ContainerInfo => ({
  id: 'id',
  name: 'srv',
  image: 'img',
  state: 'running',
  running: true,
  exitCode: 0,
  labels: {},
  ports: [],
  ipAddresses: {},
  ...overrides,
});

describe('buildContainerSpec', () => {
  it('builds a locked-down stdio container with Moat labels and the server args', () => {
    const spec = buildContainerSpec(
      config({
        cmd_args: ['--verbose'],
        group: 'g1',
        container_labels: { team: 'a' },
        permission_profile: null,
      }),
      { A: '1' },
    );
    expect(spec).toMatchObject({
      name: 'srv',
      image: 'localhost/server:1',
      cmd: ['--verbose'],
      env: { A: '1', MCP_TRANSPORT: 'stdio' },
      labels: {
        team: 'a',
        moat: 'true',
        'moat-name': 'srv',
        'moat-basename': 'srv',
        'moat-transport': 'stdio',
        'moat-port': '4100',
        'moat-group': 'g1',
      },
      ports: [],
      networkMode: 'bridge',
      attachStdio: true,
      privileged: false,
      capDrop: ['ALL'],
      securityOpt: ['no-new-privileges'],
    });
  });

  it('publishes an HTTP server on 127.0.0.1 at an engine-picked port and tells it where to listen', () => {
    const spec = buildContainerSpec(config({ transport: 'streamable-http', target_port: 8123 }), {});
    expect(spec.env).toMatchObject({
      MCP_TRANSPORT: 'streamable-http',
      MCP_PORT: '8123',
      FASTMCP_PORT: '8123',
      MCP_HOST: '0.0.0.0',
    });
    expect(spec.ports).toEqual([{ containerPort: 8123, hostIp: '127.0.0.1', hostPort: 0 }]);
    expect(spec.attachStdio).toBe(false);
  });

  it('transport variables win over user variables of the same name (they must match the real ports)', () => {
    const spec = buildContainerSpec(config({ transport: 'sse', target_port: 9000 }), { MCP_PORT: '1' });
    expect(spec.env.MCP_PORT).toBe('9000');
  });

  it('binds target_host with host networking and publishes nothing', () => {
    const spec = buildContainerSpec(
      config({
        transport: 'sse',
        target_port: 9000,
        target_host: '127.0.0.1',
        permission_profile: { network: { mode: 'host', outbound: { insecure_allow_all: true } } },
      }),
      {},
    );
    expect(spec.networkMode).toBe('host');
    expect(spec.ports).toEqual([]);
    expect(spec.env.MCP_HOST).toBe('127.0.0.1');
  });

  it('denies outbound traffic for the none profile: no network for stdio, a deny-all sandbox for HTTP', () => {
    const stdio = buildContainerSpec(config({ permission_profile_name_or_path: 'none' }), {});
    expect(stdio).toMatchObject({ networkMode: 'none' });
    expect(stdio.sandbox).toBeUndefined();
    const http = buildContainerSpec(
      config({ transport: 'streamable-http', target_port: 8080, permission_profile_name_or_path: 'stdio' }),
      {},
    );
    expect(http).toMatchObject({
      networkMode: 'container:srv-relay',
      ports: [{ containerPort: 8080, hostIp: '127.0.0.1', hostPort: 0 }],
      sandbox: { allowAll: false, allowHosts: [], allowPorts: [], proxyPort: 3128, ingressPort: 8080 },
    });
  });

  it('isolates a bridge workload in its sandbox, gateways blocked unless --allow-docker-gateway', () => {
    const isolated = buildContainerSpec(config({ isolate_network: true }), {});
    expect(isolated).toMatchObject({
      networkMode: 'container:srv-relay',
      sandbox: { allowAll: true, gateway: 'block', proxyPort: 3128 },
    });
    expect(isolated.sandbox?.ingressPort).toBeUndefined();
    const gateway = buildContainerSpec(config({ isolate_network: true, allow_docker_gateway: true }), {});
    expect(gateway.sandbox?.gateway).toBe('allow');
    // A stdio server that may reach nothing needs no sandbox, unless the gateway is allowed.
    expect(
      buildContainerSpec(config({ isolate_network: true, permission_profile_name_or_path: 'none' }), {}),
    ).toMatchObject({ networkMode: 'none' });
    expect(
      buildContainerSpec(
        config({
          isolate_network: true,
          allow_docker_gateway: true,
          permission_profile_name_or_path: 'none',
        }),
        {},
      ).sandbox,
    ).toMatchObject({ allowAll: false, gateway: 'allow' });
    // Not isolated: the network profile gets plain bridge networking, an allowlist still its proxy.
    expect(buildContainerSpec(config({ isolate_network: false }), {})).toMatchObject({
      networkMode: 'bridge',
    });
    const allowlist = buildContainerSpec(
      config({
        permission_profile: { network: { outbound: { allow_host: ['a.test'], allow_port: [443] } } },
      }),
      {},
    );
    expect(allowlist.sandbox).toMatchObject({
      allowHosts: ['a.test'],
      allowPorts: [443],
      gateway: 'profile',
    });
  });

  it('moves the proxy port off the server port on the shared loopback', () => {
    const spec = buildContainerSpec(
      config({ isolate_network: true, transport: 'sse', target_port: 3128 }),
      {},
    );
    expect(spec.sandbox).toMatchObject({ proxyPort: 3129, ingressPort: 3128 });
  });

  it('says why isolation is dropped for host and none networks', () => {
    const host = config({
      isolate_network: true,
      permission_profile: { network: { mode: 'host', outbound: { insecure_allow_all: true } } },
    });
    expect(isolationDropped(host)).toMatch(
      /isolation is off: it needs bridge networking, and --network host puts the container on the host's network/,
    );
    const none = config({ isolate_network: true, permission_profile: { network: { mode: 'none' } } });
    expect(isolationDropped(none)).toMatch(
      /not needed with --network none: the container has no network at all/,
    );
    expect(isolationDropped(config({ isolate_network: true }))).toBeUndefined();
    expect(
      isolationDropped(config({ isolate_network: false, permission_profile: { network: { mode: 'host' } } })),
    ).toBeUndefined();
  });

  it('refuses network modes that cannot enforce a deny-all profile', () => {
    expect(() =>
      buildContainerSpec(config({ permission_profile: { network: { mode: 'host', outbound: {} } } }), {}),
    ).toThrow(/cannot be enforced with --network host/);
    expect(() =>
      buildContainerSpec(config({ permission_profile: { network: { mode: 'mynet', outbound: {} } } }), {}),
    ).toThrow(/cannot be enforced with --network mynet/);
  });

  it('rejects an HTTP server on --network none and -p where nothing can be published', () => {
    expect(() =>
      buildContainerSpec(
        config({ transport: 'sse', target_port: 1, permission_profile: { network: { mode: 'none' } } }),
        {},
      ),
    ).toThrow(/unreachable/);
    expect(() =>
      buildContainerSpec(config({ permission_profile_name_or_path: 'none', publish: ['8080:80'] }), {}),
    ).toThrow(/-p cannot publish ports with this network \(none\)/);
    expect(() => buildContainerSpec(config({ isolate_network: true, publish: ['8080:80'] }), {})).toThrow(
      /-p cannot publish ports with this network \(an isolated workload has only its MCP port/,
    );
  });

  it('adds -p bindings and the profile and -v mounts', () => {
    const spec = buildContainerSpec(
      config({
        publish: ['18080:80', '0.0.0.0:18081:81/tcp'],
        volumes: ['/srv/data:/data:ro'],
        permission_profile: {
          read: ['/etc/hosts:/h'],
          write: ['/tmp/out:/out'],
          network: { outbound: { insecure_allow_all: true } },
        },
      }),
      {},
    );
    expect(spec.ports).toEqual([
      { containerPort: 80, hostIp: '127.0.0.1', hostPort: 18080 },
      { containerPort: 81, hostIp: '0.0.0.0', hostPort: 18081 },
    ]);
    expect(spec.mounts).toEqual([
      { source: '/etc/hosts', target: '/h', readOnly: true },
      { source: '/tmp/out', target: '/out', readOnly: false },
      { source: '/srv/data', target: '/data', readOnly: true },
    ]);
  });

  it('marks the container privileged only when the profile says so, and warns', () => {
    let logged = '';
    const sink = new PassThrough().on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const previous = log();
    setLogger(createLogger(false, sink));
    try {
      const profile = { privileged: true, network: { outbound: { insecure_allow_all: true } } };
      expect(buildContainerSpec(config({ permission_profile: profile }), {}).privileged).toBe(true);
    } finally {
      setLogger(previous);
    }
    expect(logged).toContain('PRIVILEGED');
    expect(buildContainerSpec(config(), {}).privileged).toBe(false);
  });

  it('needs a target port for HTTP servers and a valid container name', () => {
    expect(() => buildContainerSpec(config({ transport: 'streamable-http' }), {})).toThrow(
      /needs a target port/,
    );
    expect(() => buildContainerSpec(config({ container_name: '-bad name' }), {})).toThrow(/container name/);
  });

  it('rejects invalid and reserved labels instead of skipping them', () => {
    expect(() => buildContainerSpec(config({ container_labels: { 'bad key': 'x' } }), {})).toThrow(
      /label key/,
    );
    expect(() => buildContainerSpec(config({ container_labels: { 'moat-name': 'x' } }), {})).toThrow(
      /reserved/,
    );
  });

  it('fails when the config names a profile file it does not contain', () => {
    expect(() => buildContainerSpec(config({ permission_profile_name_or_path: './p.json' }), {})).toThrow(
      /does not contain it/,
    );
  });
});

describe('validateLabel', () => {
  it('accepts Kubernetes-style keys and values', () => {
    expect(() => validateLabel('app.kubernetes.io/name', 'fetch')).not.toThrow();
    expect(() => validateLabel('tier', '')).not.toThrow();
  });

  it.each([
    ['-x', 'v', /label key/],
    ['Example.com/x', 'v', /prefix/],
    ['x', 'has space', /value/],
    ['x'.repeat(64), 'v', /label key/],
    ['moat', 'true', /reserved/],
  ])('rejects %s=%s', (key, value, message) => {
    expect(() => validateLabel(key, value)).toThrow(message);
  });
});

describe('parsePublish', () => {
  it('defaults to loopback and rejects malformed values', () => {
    expect(parsePublish('8080:80')).toEqual({ hostIp: '127.0.0.1', hostPort: 8080, containerPort: 80 });
    expect(() => parsePublish('8080:80/udp')).toThrow(/only tcp/);
    expect(() => parsePublish('80')).toThrow(/hostPort:containerPort/);
    expect(() => parsePublish('x:80')).toThrow(/host port/);
    expect(() => parsePublish('8080:70000')).toThrow(/container port/);
  });
});

describe('httpTarget', () => {
  it('uses the published binding or the host target', () => {
    const bridge = { networkMode: 'bridge' };
    expect(
      httpTarget(bridge, info({ ports: [{ containerPort: 80, hostIp: '127.0.0.1', hostPort: 4321 }] }), 80),
    ).toEqual({
      host: '127.0.0.1',
      port: 4321,
    });
    expect(httpTarget(bridge, info({}), 80)).toBeUndefined();
    expect(httpTarget({ networkMode: 'host' }, info({}), 80)).toEqual({
      host: '127.0.0.1',
      port: 80,
    });
  });
});
