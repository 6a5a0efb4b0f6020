/**
 * The referenced kinds' controllers with the MCPRemoteProxy controller, on the real API server,
 * under the shipped RBAC: `Valid`, `configHash`, `observedGeneration` and the referrer list; a
 * change to a referenced object re-hashes and rolls the proxies that use it; a missing reference
 * fails the proxy and its creation recovers it; deletion waits while a proxy references the object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStatus } from '../../../src/operator/controller/client.js';
import { collectionPath, objectPath, type KubeObject } from '../../../src/operator/controller/resource.js';
import { CONDITION, RUNCONFIG_CHECKSUM, proxyObjectNames } from '../../../src/operator/reconcile/index.js';
import { IN_USE_FINALIZER } from '../../../src/operator/reconcilers/config-kind.js';
import {
  AUTHZ_CONFIGS,
  DEPLOYMENTS,
  OIDC_CONFIGS,
  REMOTE_PROXIES,
  TOOL_CONFIGS,
} from '../../../src/operator/reconcilers/kinds.js';
import type { ResourceType } from '../../../src/operator/controller/resource.js';
import { adminClient, eventually } from '../../support/kube-controller.js';
import { loggedErrors, startTestOperator, type OperatorUnderTest } from '../../support/moat-operator.js';
import type { Condition } from '../../../src/operator/crd/schema-parts.js';

const WAIT_MS = 20_000;
let env: OperatorUnderTest;
const admin = adminClient();

beforeAll(async () => {
  env = await startTestOperator('ref');
}, 60_000);
afterAll(async () => {
  await env?.operator.stop();
});

interface Status {
  phase?: string;
  configHash?: string;
  observedGeneration?: number;
  toolConfigHash?: string;
  oidcConfigHash?: string;
  referencingWorkloads?: { kind: string; name: string }[];
  conditions?: Condition[];
}

const create = (type: ResourceType, name: string, spec: Record<string, unknown>) =>
  admin.create(collectionPath(type, env.namespace), {
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: { name },
    spec,
  });
const read = (type: ResourceType, name: string) => admin.get(objectPath(type, env.namespace, name));
const statusOf = async (type: ResourceType, name: string) =>
  ((await read(type, name)).status ?? {}) as Status;
const condition = (s: Status, type: string) => s.conditions?.find((c) => c.type === type);

function until(type: ResourceType, name: string, check: (s: Status) => void): Promise<Status> {
  return eventually(async () => {
    const status = await statusOf(type, name);
    try {
      check(status);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\n${type.kind} ${name} status: ${JSON.stringify(status)}\nerrors: ${loggedErrors(env.logLines()).join('\n')}`,
        { cause: err },
      );
    }
    return status;
  }, WAIT_MS);
}

type Deployment = KubeObject & { spec: { template: { metadata: { annotations?: Record<string, string> } } } };
const checksum = async (proxy: string) =>
  (await admin.get<Deployment>(objectPath(DEPLOYMENTS, env.namespace, proxyObjectNames(proxy).deployment)))
    .spec.template.metadata.annotations?.[RUNCONFIG_CHECKSUM];

describe('referenced kinds', () => {
  it('an MCPToolConfig gets Valid, configHash, observedGeneration and a finalizer; a proxy using it records the hash and rolls when it changes', async () => {
    await create(TOOL_CONFIGS, 'tools', { toolsFilter: ['search'] });
    const first = await until(TOOL_CONFIGS, 'tools', (s) => {
      expect(condition(s, 'Valid')).toMatchObject({ status: 'True' });
      expect(s.configHash).toMatch(/^[0-9a-f]{16}$/);
      expect(s.observedGeneration).toBe(1);
    });
    expect((await read(TOOL_CONFIGS, 'tools')).metadata?.finalizers).toContain(IN_USE_FINALIZER);

    await create(REMOTE_PROXIES, 'uses-tools', {
      remoteUrl: 'https://mcp.example.com/mcp',
      toolConfigRef: { name: 'tools' },
    });
    await until(REMOTE_PROXIES, 'uses-tools', (s) => {
      expect(s.phase).toBe('Pending');
      expect(s.toolConfigHash).toBe(first.configHash);
      expect(condition(s, CONDITION.toolConfigRef)).toMatchObject({ status: 'True' });
    });
    await until(TOOL_CONFIGS, 'tools', (s) =>
      expect(s.referencingWorkloads).toEqual([{ kind: 'MCPRemoteProxy', name: 'uses-tools' }]),
    );
    const before = await checksum('uses-tools');

    await admin.mergePatch(objectPath(TOOL_CONFIGS, env.namespace, 'tools'), {
      spec: { toolsFilter: ['search', 'fetch'] },
    });
    const second = await until(TOOL_CONFIGS, 'tools', (s) => expect(s.observedGeneration).toBe(2));
    expect(second.configHash).not.toBe(first.configHash);
    await until(REMOTE_PROXIES, 'uses-tools', (s) => expect(s.toolConfigHash).toBe(second.configHash));
    await eventually(async () => expect(await checksum('uses-tools')).not.toBe(before), WAIT_MS);
  });

  it('a missing MCPOIDCConfig fails the proxy with the condition; creating it recovers the proxy', async () => {
    await create(REMOTE_PROXIES, 'needs-oidc', {
      remoteUrl: 'https://mcp.example.com/mcp',
      oidcConfigRef: { name: 'cluster-oidc', audience: 'needs-oidc' },
    });
    const failed = await until(REMOTE_PROXIES, 'needs-oidc', (s) => expect(s.phase).toBe('Failed'));
    expect(condition(failed, CONDITION.oidcConfigRef)).toMatchObject({
      status: 'False',
      reason: 'OIDCConfigRefNotFound',
    });
    await expect(read(DEPLOYMENTS, proxyObjectNames('needs-oidc').deployment)).rejects.toSatisfy((e) =>
      isStatus(e, 404),
    );

    await create(OIDC_CONFIGS, 'cluster-oidc', {
      type: 'inline',
      inline: { issuer: 'https://issuer.example.com' },
    });
    // Pending with the condition Unknown until the MCPOIDCConfig's own controller has validated it.
    const recovered = await until(REMOTE_PROXIES, 'needs-oidc', (s) => {
      expect(s.phase).toBe('Pending');
      expect(condition(s, CONDITION.oidcConfigRef)).toMatchObject({ status: 'True' });
    });
    expect(recovered.oidcConfigHash).toMatch(/^[0-9a-f]{16}$/);
  });

  it('an MCPAuthzConfig whose Cedar does not parse is Valid=False, and a proxy using it fails naming it', async () => {
    await create(AUTHZ_CONFIGS, 'bad-policy', { policies: ['permit(principal, action, resource'] });
    const invalid = await until(AUTHZ_CONFIGS, 'bad-policy', (s) =>
      expect(condition(s, 'Valid')).toMatchObject({ status: 'False', reason: 'InvalidPolicy' }),
    );
    expect(invalid.configHash).toBeUndefined();
    await create(REMOTE_PROXIES, 'uses-bad-policy', {
      remoteUrl: 'https://mcp.example.com/mcp',
      authzConfigRef: { name: 'bad-policy' },
    });
    const failed = await until(REMOTE_PROXIES, 'uses-bad-policy', (s) => expect(s.phase).toBe('Failed'));
    expect(condition(failed, CONDITION.authzConfigRef)).toMatchObject({
      status: 'False',
      reason: 'AuthzConfigRefNotValid',
    });
    expect(condition(failed, CONDITION.authzConfigRef)?.message).toContain('bad-policy');
  });

  it('deleting a referenced config waits (DeletionBlocked names the proxy) until the proxy is gone', async () => {
    await create(TOOL_CONFIGS, 'shared', { toolsFilter: ['a'] });
    await create(REMOTE_PROXIES, 'holder', {
      remoteUrl: 'https://mcp.example.com/mcp',
      toolConfigRef: { name: 'shared' },
    });
    await until(TOOL_CONFIGS, 'shared', (s) =>
      expect(s.referencingWorkloads).toEqual([{ kind: 'MCPRemoteProxy', name: 'holder' }]),
    );
    await admin.delete(objectPath(TOOL_CONFIGS, env.namespace, 'shared'));
    const blocked = await until(TOOL_CONFIGS, 'shared', (s) =>
      expect(condition(s, 'DeletionBlocked')).toMatchObject({
        status: 'True',
        reason: 'ReferencedByWorkloads',
      }),
    );
    expect(condition(blocked, 'DeletionBlocked')?.message).toContain('holder');
    expect((await read(TOOL_CONFIGS, 'shared')).metadata?.deletionTimestamp).toBeDefined();

    await admin.delete(objectPath(REMOTE_PROXIES, env.namespace, 'holder'));
    await eventually(
      () => expect(read(TOOL_CONFIGS, 'shared')).rejects.toSatisfy((e) => isStatus(e, 404)),
      WAIT_MS,
    );
    await expect(read(REMOTE_PROXIES, 'holder')).rejects.toSatisfy((e) => isStatus(e, 404));
  });

  it('runs without reconcile errors under the shipped RBAC', () => {
    expect(loggedErrors(env.logLines())).toEqual([]);
  });
});
