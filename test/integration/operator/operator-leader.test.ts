/**
 * Two `moat operator` processes (the real binary, the shipped RBAC, leader election on): only the
 * one holding the Leases reconciles; when it stops (SIGTERM releases the Leases) the other takes
 * over at once and reconciles what comes next.
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

const dir = operatorProcessDir('moat-operator-leader');

/** An operator process with its own leader-election identity, watching and leasing in `namespace`. */
function startOperator(identity: string, namespace: string, kubeconfig: string): Promise<OperatorProcess> {
  return spawnOperator(
    kubeconfig,
    ['--namespace', namespace, '--lease-namespace', namespace, '--proxy-image', 'example.test/moat:leader'],
    { POD_NAME: identity },
  );
}

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

describe('moat operator with two replicas', () => {
  it('reconciles from the leader only and hands over when the leader stops', async () => {
    const { namespace, token } = await prepareOperatorNamespace('lead');
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, token);
    const admin = adminClient();
    const lease = () => admin.get(objectPath(LEASES, namespace, 'moat-mcpremoteproxy-leader'));
    const holder = async () =>
      ((await lease()).spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    const first = await startOperator('operator-a', namespace, kubeconfig);
    await eventually(async () => expect(await holder(), first.output()).toBe('operator-a'), 30_000);
    const second = await startOperator('operator-b', namespace, kubeconfig);
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
