/**
 * `moat operator` as a real process under its own ServiceAccount (a kubeconfig with its token):
 * it starts, serves /readyz, reconciles a proxy, and exits 0 on SIGTERM within a bound.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createMinimalProxy,
  operatorProcessDir,
  prepareOperatorNamespace,
  proxyDeployment,
  spawnOperator,
  stopOperatorProcess,
  waitForReady,
  writeKubeconfig,
} from '../../support/moat-operator.js';

const dir = operatorProcessDir('moat-operator');

describe('moat operator (process)', () => {
  it('serves /readyz, reconciles a proxy and stops on SIGTERM', async () => {
    const { namespace, token } = await prepareOperatorNamespace('proc');
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, token);
    const op = await spawnOperator(kubeconfig, [
      '--namespace',
      namespace,
      '--lease-namespace',
      namespace,
      '--proxy-image',
      'example.test/moat:proc',
    ]);
    await waitForReady(op);

    await createMinimalProxy(namespace, 'proc');
    const deployment = await proxyDeployment(namespace, 'proc');
    expect(JSON.stringify(deployment.spec)).toContain('example.test/moat:proc');
    const metrics = await (await fetch(`http://127.0.0.1:${op.port}/metrics`)).text();
    expect(metrics).toMatch(/controller="moat-mcpremoteproxy"/);

    expect(await stopOperatorProcess(op), op.output()).toBe(0);
  }, 120_000);
});
