/**
 * `moat operator` as a real process under its own ServiceAccount (a kubeconfig with its token):
 * it starts, serves /readyz, reconciles a proxy, and exits 0 on SIGTERM within a bound.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectionPath, objectPath } from '../../../src/operator/controller/resource.js';
import { proxyObjectNames } from '../../../src/operator/reconcile/index.js';
import { DEPLOYMENTS, REMOTE_PROXIES } from '../../../src/operator/reconcilers/kinds.js';
import { adminClient, eventually } from '../../support/kube-controller.js';
import { MOAT_MAIN, ensureBuilt } from '../../support/moat-cli.js';
import { prepareOperatorNamespace, writeKubeconfig } from '../../support/moat-operator.js';
import { freePort } from '../../support/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'moat-operator-'));
let child: ChildProcess | undefined;
afterAll(() => {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('moat operator (process)', () => {
  it('serves /readyz, reconciles a proxy and stops on SIGTERM', async () => {
    await ensureBuilt();
    const { namespace, token } = await prepareOperatorNamespace('proc');
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, token);
    const port = await freePort();
    let output = '';
    child = spawn(
      process.execPath,
      [
        MOAT_MAIN,
        'operator',
        '--namespace',
        namespace,
        '--lease-namespace',
        namespace,
        '--probe-port',
        String(port),
        '--probe-host',
        '127.0.0.1',
        '--proxy-image',
        'example.test/moat:proc',
      ],
      { env: { ...process.env, KUBECONFIG: kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(res.status, output).toBe(200);
    }, 30_000);

    const admin = adminClient();
    await admin.create(collectionPath(REMOTE_PROXIES, namespace), {
      apiVersion: REMOTE_PROXIES.apiVersion,
      kind: REMOTE_PROXIES.kind,
      metadata: { name: 'proc' },
      spec: { remoteUrl: 'https://mcp.example.com/mcp' },
    });
    const deployment = await eventually(
      () => admin.get(objectPath(DEPLOYMENTS, namespace, proxyObjectNames('proc').deployment)),
      20_000,
    );
    expect(JSON.stringify(deployment.spec)).toContain('example.test/moat:proc');
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/controller="moat-mcpremoteproxy"/);

    process.kill(child.pid!, 'SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000)),
    ]);
    expect(code, output).toBe(0);
  }, 120_000);
});
