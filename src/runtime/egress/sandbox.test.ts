import { describe, expect, it } from 'vitest';
import type { SandboxSpec } from '../types.js';
import { egressContainerBody, relayContainerBody, sandboxNetworkMode, sandboxProxyEnv } from './sandbox.js';

const sandbox: SandboxSpec = {
  allowAll: false,
  allowHosts: ['api.example.com'],
  allowPorts: [443],
  gateway: 'block',
  proxyPort: 3128,
  ingressPort: 8080,
};
const ports = [{ containerPort: 8080, hostIp: '127.0.0.1', hostPort: 0 }];

function configOf(body: object): Record<string, unknown> {
  const env = (body as { Env: string[] }).Env.find((e) => e.startsWith('MOAT_EGRESS_CONFIG='))!;
  return JSON.parse(env.slice('MOAT_EGRESS_CONFIG='.length)) as Record<string, unknown>;
}

describe('sandbox containers', () => {
  it('runs the egress proxy as nobody without capabilities on the bridge, publishing the server port there', () => {
    const body = egressContainerBody({ name: 'srv', ports, sandbox }, 'localhost/moat-egress:x', [
      '10.88.0.1',
    ]);
    expect(body).toMatchObject({
      User: '65534:65534',
      Labels: { 'moat-egress-for': 'srv' },
      ExposedPorts: { '8080/tcp': {} },
      HostConfig: {
        NetworkMode: 'bridge',
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        PortBindings: { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
        Mounts: [{ Type: 'volume', Source: 'moat-srv-sandbox', Target: '/run/moat' }],
      },
    });
    expect(configOf(body)).toEqual({
      role: 'egress',
      listen: '/run/moat/egress.sock',
      allowAll: false,
      allowHosts: ['api.example.com'],
      allowPorts: [443],
      gateway: 'block',
      gatewayAddresses: ['10.88.0.1'],
      ingress: { port: 8080, socket: '/run/moat/ingress.sock' },
    });
  });

  it('gives the relay no network but loopback; the workload joins it and finds the proxy there', () => {
    const body = relayContainerBody({ name: 'srv', sandbox }, 'img');
    expect(body).toMatchObject({
      User: '65534:65534',
      HostConfig: { NetworkMode: 'none', CapDrop: ['ALL'] },
    });
    expect(configOf(body)).toEqual({
      role: 'relay',
      proxyPort: 3128,
      egressSocket: '/run/moat/egress.sock',
      ingress: { socket: '/run/moat/ingress.sock', targetPort: 8080 },
    });
    expect(sandboxNetworkMode('srv')).toBe('container:srv-relay');
    expect(sandboxProxyEnv(sandbox)).toMatchObject({
      HTTP_PROXY: 'http://127.0.0.1:3128',
      https_proxy: 'http://127.0.0.1:3128',
      NO_PROXY: 'localhost,127.0.0.1,::1',
      NODE_USE_ENV_PROXY: '1',
    });
  });

  it('has no ingress for a stdio server', () => {
    const stdio = { ...sandbox, ingressPort: undefined };
    expect(
      configOf(egressContainerBody({ name: 'srv', ports: [], sandbox: stdio }, 'img', [])),
    ).not.toHaveProperty('ingress');
    expect(configOf(relayContainerBody({ name: 'srv', sandbox: stdio }, 'img'))).not.toHaveProperty(
      'ingress',
    );
  });
});
