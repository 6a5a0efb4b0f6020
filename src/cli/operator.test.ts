import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadKubeConfig, parseOperatorFlags } from './operator.js';
import { packageVersion } from './version.js';

describe('moat operator flags', () => {
  it('defaults: all namespaces, leader election in $POD_NAMESPACE, port 8081, the package image', () => {
    expect(parseOperatorFlags([], { POD_NAMESPACE: 'moat-system' })).toEqual({
      leaderElect: true,
      leaseNamespace: 'moat-system',
      probePort: 8081,
      probeHost: '0.0.0.0',
      proxyImage: `mcp-moat:${packageVersion()}`,
      logLevel: 'info',
    });
    expect(parseOperatorFlags([], {})?.leaseNamespace).toBe('default');
  });

  it('reads every flag, repeated --namespace and the --flag=value form', () => {
    const flags = parseOperatorFlags(
      [
        '--namespace',
        'a',
        '--namespace=b',
        '--leader-elect=false',
        '--lease-namespace',
        'ops',
        '--probe-port',
        '0',
        '--probe-host',
        '127.0.0.1',
        '--proxy-image',
        'registry.example/moat:1',
        '--log-level',
        'debug',
      ],
      {},
    );
    expect(flags).toEqual({
      namespaces: ['a', 'b'],
      leaderElect: false,
      leaseNamespace: 'ops',
      probePort: 0,
      probeHost: '127.0.0.1',
      proxyImage: 'registry.example/moat:1',
      logLevel: 'debug',
    });
  });

  it('returns undefined for --help', () => {
    expect(parseOperatorFlags(['--help'], {})).toBeUndefined();
  });

  it.each([
    [['--probe-port', '70000'], /--probe-port must be a port number/],
    [['--probe-port', 'http'], /--probe-port must be a port number/],
    [['--leader-elect', 'yes'], /--leader-elect must be true or false/],
    [['--log-level', 'loud'], /--log-level must be one of trace, debug, info, warn, error/],
    [['--namespace'], /--namespace needs a value/],
    [['--watch-all'], /unknown option "--watch-all"/],
  ])('rejects %j with a message naming the flag', (args, message) => {
    expect(() => parseOperatorFlags(args, {})).toThrow(message);
  });
});

describe('loadKubeConfig', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('refuses to fall back to localhost:8080 when there is no configuration at all', () => {
    const home = mkdtempSync(join(tmpdir(), 'moat-no-kube-'));
    try {
      vi.stubEnv('HOME', home);
      vi.stubEnv('KUBECONFIG', '');
      vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
      expect(() => loadKubeConfig()).toThrow(/no Kubernetes configuration found/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
