import type { V1Deployment } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  mcpOidcConfigSpecSchema,
  mcpToolConfigSpecSchema,
  type MCPRemoteProxySpecInput,
} from '../crd/index.js';
import { makeConfig, makeInputs } from './fixtures.js';
import type { ProxyInputs } from './inputs.js';
import { computeStatus, type StatusInputs } from './status.js';
import { validateProxy } from './validate.js';

const REMOTE = 'https://mcp.example.com/mcp';
const T0 = new Date('2026-11-24T10:00:00Z');
const T1 = new Date('2026-11-24T11:00:00Z');

function deployment(available: number, generation = 1, observed = generation): V1Deployment {
  return {
    metadata: { generation },
    spec: { replicas: 1, selector: {}, template: {} },
    status: { observedGeneration: observed, availableReplicas: available },
  };
}

function run(
  spec: Omit<MCPRemoteProxySpecInput, 'remoteUrl'> & { remoteUrl?: string },
  rest: Partial<Omit<StatusInputs, 'inputs' | 'checks'>> & {
    extra?: Partial<ProxyInputs>;
    previous?: ProxyInputs['proxy']['status'];
  } = {},
) {
  const inputs = makeInputs({ remoteUrl: REMOTE, ...spec }, rest.extra);
  inputs.proxy.status = rest.previous;
  return computeStatus({ inputs, checks: validateProxy(inputs), now: rest.now ?? T0, ...rest });
}
const unvalidatedTools = () => makeConfig('MCPToolConfig', mcpToolConfigSpecSchema, 't', {});
const condition = (result: ReturnType<typeof run>, type: string) =>
  result.status.conditions?.find((c) => c.type === type);

describe('computeStatus', () => {
  it.each<[string, Parameters<typeof run>[0], Parameters<typeof run>[1], string, string]>([
    ['no Deployment yet', {}, {}, 'Pending', 'DeploymentNotReady'],
    ['no pod available', {}, { deployment: deployment(0) }, 'Pending', 'DeploymentNotReady'],
    ['rollout not observed yet', {}, { deployment: deployment(1, 2, 1) }, 'Pending', 'DeploymentNotReady'],
    ['scaled to zero', { replicas: 0 }, { deployment: deployment(0) }, 'Pending', 'DeploymentNotReady'],
    ['available', {}, { deployment: deployment(1) }, 'Ready', 'DeploymentAvailable'],
    [
      'blocked remote URL',
      { remoteUrl: 'http://127.0.0.1/' },
      { deployment: deployment(1) },
      'Failed',
      'ValidationFailed',
    ],
    [
      'apply error',
      {},
      { applyError: 'forbidden: deployments', deployment: deployment(1) },
      'Failed',
      'ApplyFailed',
    ],
    ['reference not found', { toolConfigRef: { name: 't' } }, {}, 'Failed', 'ValidationFailed'],
    [
      'reference not validated yet',
      { toolConfigRef: { name: 't' } },
      { extra: { toolConfig: { ...unvalidatedTools(), metadata: { name: 't', generation: 2 } } } },
      'Pending',
      'WaitingForReferences',
    ],
  ])('%s → %s', (_name, spec, rest, phase, readyReason) => {
    const result = run(spec, rest);
    expect(result.status.phase).toBe(phase);
    expect(condition(result, 'Ready')).toMatchObject({
      status: phase === 'Ready' ? 'True' : 'False',
      reason: readyReason,
    });
  });

  it('Failed names the failing check in the message', () => {
    const result = run({ remoteUrl: 'http://169.254.169.254/' });
    expect(result.status.message).toMatch(/cloud metadata endpoint/);
    expect(condition(result, 'RemoteURLValid')).toMatchObject({
      status: 'False',
      reason: 'RemoteURLBlocked',
    });
  });

  it('Terminating while the finalizer cleans up', () => {
    const inputs = makeInputs({ remoteUrl: REMOTE });
    inputs.proxy.metadata.deletionTimestamp = T0;
    const result = computeStatus({ inputs, checks: validateProxy(inputs), now: T1 });
    expect(result.status.phase).toBe('Terminating');
    expect(result.events).toContainEqual(
      expect.objectContaining({ type: 'Normal', reason: 'ProxyTerminating' }),
    );
  });

  it('url follows the current proxyPort; observedGeneration is the generation', () => {
    expect(run({}).status.url).toBe('http://mcp-github-remote-proxy.team-a.svc.cluster.local:8080');
    const moved = run({ proxyPort: 9090 }, { previous: run({}).status });
    expect(moved.status.url).toBe('http://mcp-github-remote-proxy.team-a.svc.cluster.local:9090');
    expect(moved.status.observedGeneration).toBe(1);
    expect(moved.status.conditions!.every((c) => c.observedGeneration === 1)).toBe(true);
  });

  it('externalUrl is the resourceUrl the user states', () => {
    const spec = {
      oidcConfigRef: { name: 'idp', audience: 'a', resourceUrl: 'https://mcp.corp.example/gh' },
    };
    expect(run(spec).status.externalUrl).toBe('https://mcp.corp.example/gh');
    expect(run({}).status.externalUrl).toBeUndefined();
  });

  it('carries the hash of each referenced object', () => {
    const tools = makeConfig('MCPToolConfig', mcpToolConfigSpecSchema, 't', { toolsFilter: ['a'] });
    const idp = makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', {
      type: 'inline',
      inline: { issuer: 'https://i' },
    });
    const result = run(
      { toolConfigRef: { name: 't' }, oidcConfigRef: { name: 'idp', audience: 'a' } },
      { extra: { toolConfig: tools, oidcConfig: idp } },
    );
    expect(result.status.toolConfigHash).toBe(tools.status!.configHash);
    expect(result.status.oidcConfigHash).toBe(idp.status!.configHash);
    expect(result.status.authzConfigHash).toBeUndefined();
    const changed = makeConfig('MCPToolConfig', mcpToolConfigSpecSchema, 't', { toolsFilter: ['b'] });
    expect(
      run({ toolConfigRef: { name: 't' } }, { extra: { toolConfig: changed } }).status.toolConfigHash,
    ).not.toBe(tools.status!.configHash);
  });

  it('lastTransitionTime moves only when a status changes', () => {
    const first = run({}, { now: T0 });
    const same = run({}, { now: T1, previous: first.status });
    expect(condition(same, 'Ready')!.lastTransitionTime).toBe(T0.toISOString());
    expect(condition(same, 'RemoteURLValid')!.lastTransitionTime).toBe(T0.toISOString());
    const ready = run({}, { now: T1, previous: first.status, deployment: deployment(1) });
    expect(condition(ready, 'Ready')!.lastTransitionTime).toBe(T1.toISOString());
    expect(condition(ready, 'RemoteURLValid')!.lastTransitionTime).toBe(T0.toISOString());
  });

  it('drops the condition of a removed reference', () => {
    const withRef = run({ toolConfigRef: { name: 't' } });
    expect(condition(withRef, 'ToolConfigRefValid')).toBeDefined();
    expect(condition(run({}, { previous: withRef.status }), 'ToolConfigRefValid')).toBeUndefined();
  });

  it('lists fields the merge did not apply', () => {
    const result = run({}, { ignored: ['podTemplateSpec.spec.hostNetwork'] });
    expect(condition(result, 'OverridesIgnored')).toMatchObject({
      status: 'True',
      reason: 'OverridesIgnored',
    });
    expect(condition(result, 'OverridesIgnored')!.message).toMatch(/podTemplateSpec\.spec\.hostNetwork/);
  });

  describe('events', () => {
    it('first reconcile of a healthy proxy: one Normal phase event', () => {
      expect(run({}).events).toEqual([
        { type: 'Normal', reason: 'ProxyPending', message: 'the Deployment does not exist yet' },
      ]);
    });

    it('becoming Ready', () => {
      const pending = run({});
      const ready = run({}, { previous: pending.status, deployment: deployment(1) });
      expect(ready.events).toEqual([
        {
          type: 'Normal',
          reason: 'ProxyReady',
          message: 'the proxy serves http://mcp-github-remote-proxy.team-a.svc.cluster.local:8080',
        },
      ]);
    });

    it('no events when nothing changed', () => {
      const ready = run({}, { deployment: deployment(1) });
      expect(run({}, { previous: ready.status, deployment: deployment(1) }).events).toEqual([]);
    });

    it('a failing check: a Warning with its reason, then the phase', () => {
      const result = run({ remoteUrl: 'http://localhost/' });
      expect(result.events.map((e) => [e.type, e.reason])).toEqual([
        ['Warning', 'RemoteURLBlocked'],
        ['Warning', 'ProxyFailed'],
      ]);
      // Reported once: the same failure on the next reconcile emits nothing.
      expect(run({ remoteUrl: 'http://localhost/' }, { previous: result.status }).events).toEqual([]);
    });

    it('advisory warnings are events too', () => {
      const result = run({ replicas: 2 }, { deployment: deployment(1) });
      expect(result.events).toContainEqual(
        expect.objectContaining({ type: 'Warning', reason: 'SessionStorageMissingForReplicas' }),
      );
      expect(condition(result, 'SessionStorageWarning')).toMatchObject({ status: 'True' });
      expect(result.status.phase).toBe('Ready');
    });
  });
});
