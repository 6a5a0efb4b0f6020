/**
 * `moat operator` as a real process (the real binary, under its own ServiceAccount: a kubeconfig
 * with its token, the shipped RBAC, leader election on): one process starts, serves /readyz,
 * reconciles a proxy and exits 0 on SIGTERM within a bound; of two, only the one holding the
 * Leases reconciles, and when it stops (SIGTERM releases the Leases) the other takes over at once
 * and reconciles what comes next.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEASES, objectPath } from '../../../src/operator/controller/resource.js';
import { adminClient, eventually } from '../../support/kube-controller.js';
import {
  createMinimalProxy,
  operatorProcessDir,
  prepareOperatorNamespace,
  proxyDeployment,
  spawnOperator,
  stopOperatorProcess,
  waitForReady,
  writeKubeconfig,
  type OperatorProcess,
} from '../../support/moat-operator.js';

const dir = operatorProcessDir('moat-operator-process');

/** A fresh namespace and a kubeconfig file for the operator's ServiceAccount in it. */
async function operatorNamespace(prefix: string): Promise<{ namespace: string; kubeconfig: string }> {
  const { namespace, token } = await prepareOperatorNamespace(prefix);
  const kubeconfig = join(dir, `kubeconfig-${prefix}`);
  writeKubeconfig(kubeconfig, token);
  return { namespace, kubeconfig };
}

/** An operator process watching and leasing in `namespace`, with its own leader-election identity. */
function startOperator(
  namespace: string,
  kubeconfig: string,
  proxyImage: string,
  identity?: string,
): Promise<OperatorProcess> {
  return spawnOperator(
    kubeconfig,
    ['--namespace', namespace, '--lease-namespace', namespace, '--proxy-image', proxyImage],
    identity === undefined ? {} : { POD_NAME: identity },
  );
}

describe('moat operator (process)', () => {
  it('serves /readyz, reconciles a proxy and stops on SIGTERM', async () => {
    const { namespace, kubeconfig } = await operatorNamespace('proc');
    const op = await startOperator(namespace, kubeconfig, 'example.test/moat:proc');
    await waitForReady(op);

    await createMinimalProxy(namespace, 'proc');
    const deployment = await proxyDeployment(namespace, 'proc');
    expect(JSON.stringify(deployment.spec)).toContain('example.test/moat:proc');
    const metrics = await (await fetch(`http://127.0.0.1:${op.port}/metrics`)).text();
    expect(metrics).toMatch(/controller="moat-mcpremoteproxy"/);

    expect(await stopOperatorProcess(op), op.output()).toBe(0);
  }, 120_000);
});

async function leaderMetric(op: OperatorProcess): Promise<string | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${op.port}/metrics`)).text();
  return /moat_operator_leader\{[^}]*controller="moat-mcpremoteproxy"[^}]*\} (\d)/.exec(text)?.[1];
}

/** How many MCPRemoteProxy reconciles the process ran, by its own /metrics. */
async function reconciles(op: OperatorProcess): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${op.port}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(
    /moat_operator_reconcile_total\{[^}]*controller="moat-mcpremoteproxy"[^}]*\} (\d+)/g,
  )) {
    total += Number(m[1]);
  }
  return total;
}

const LEADER_IMAGE = 'example.test/moat:leader';

describe('moat operator with two replicas', () => {
  it('reconciles from the leader only and hands over when the leader stops', async () => {
    const { namespace, kubeconfig } = await operatorNamespace('lead');
    const admin = adminClient();
    const lease = () => admin.get(objectPath(LEASES, namespace, 'moat-mcpremoteproxy-leader'));
    const holder = async () =>
      ((await lease()).spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    const first = await startOperator(namespace, kubeconfig, LEADER_IMAGE, 'operator-a');
    await eventually(async () => expect(await holder(), first.output()).toBe('operator-a'), 30_000);
    const second = await startOperator(namespace, kubeconfig, LEADER_IMAGE, 'operator-b');
    await waitForReady(second);
    expect(await leaderMetric(first)).toBe('1');
    expect(await leaderMetric(second)).toBe('0');

    await createMinimalProxy(namespace, 'before');
    await proxyDeployment(namespace, 'before');
    expect(await holder()).toBe('operator-a');
    // The Deployment is applied mid-reconcile; the counter moves when that reconcile ends.
    await eventually(async () => expect(await reconciles(first)).toBeGreaterThan(0), 10_000);
    expect(await reconciles(second)).toBe(0);

    expect(await stopOperatorProcess(first), first.output()).toBe(0);
    await eventually(async () => expect(await holder(), second.output()).toBe('operator-b'), 20_000);
    expect(await leaderMetric(second)).toBe('1');
    await createMinimalProxy(namespace, 'after');
    await proxyDeployment(namespace, 'after');

    expect(await stopOperatorProcess(second), second.output()).toBe(0);
  }, 150_000);
});
