/**
 * Two `moat operator` processes (the real binary, the shipped RBAC, leader election on): only the
 * one holding the Leases reconciles; when it stops (SIGTERM releases the Leases) the other takes
 * over at once and reconciles what comes next.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LEASES, collectionPath, objectPath } from '../../../src/operator/controller/resource.js';
import { proxyObjectNames } from '../../../src/operator/reconcile/index.js';
import { DEPLOYMENTS, REMOTE_PROXIES } from '../../../src/operator/reconcilers/kinds.js';
import { adminClient, eventually } from '../../support/kube-controller.js';
import { MOAT_MAIN, ensureBuilt } from '../../support/moat-cli.js';
import { prepareOperatorNamespace, writeKubeconfig } from '../../support/moat-operator.js';
import { freePort } from '../../support/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'moat-operator-leader-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Operator {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function startOperator(identity: string, namespace: string, kubeconfig: string): Promise<Operator> {
  const port = await freePort();
  let output = '';
  const child = spawn(
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
      'example.test/moat:leader',
    ],
    {
      env: { ...process.env, KUBECONFIG: kubeconfig, POD_NAME: identity },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, output: () => output, exited };
}

async function leaderMetric(op: Operator): Promise<string | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${op.port}/metrics`)).text();
  return /moat_operator_leader\{[^}]*controller="moat-mcpremoteproxy"[^}]*\} (\d)/.exec(text)?.[1];
}

/** How many MCPRemoteProxy reconciles the process ran, by its own /metrics. */
async function reconciles(op: Operator): Promise<number> {
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
    await ensureBuilt();
    const { namespace, token } = await prepareOperatorNamespace('lead');
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, token);
    const admin = adminClient();
    const lease = () => admin.get(objectPath(LEASES, namespace, 'moat-mcpremoteproxy-leader'));
    const holder = async () =>
      ((await lease()).spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    const createProxy = (name: string) =>
      admin.create(collectionPath(REMOTE_PROXIES, namespace), {
        apiVersion: REMOTE_PROXIES.apiVersion,
        kind: REMOTE_PROXIES.kind,
        metadata: { name },
        spec: { remoteUrl: 'https://mcp.example.com/mcp' },
      });
    const deploymentOf = (name: string) =>
      admin.get(objectPath(DEPLOYMENTS, namespace, proxyObjectNames(name).deployment));

    const first = await startOperator('operator-a', namespace, kubeconfig);
    await eventually(async () => expect(await holder(), first.output()).toBe('operator-a'), 30_000);
    const second = await startOperator('operator-b', namespace, kubeconfig);
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${second.port}/readyz`);
      expect(res.status, second.output()).toBe(200);
    }, 30_000);
    expect(await leaderMetric(first)).toBe('1');
    expect(await leaderMetric(second)).toBe('0');

    await createProxy('before');
    await eventually(() => deploymentOf('before'), 20_000);
    expect(await holder()).toBe('operator-a');
    expect(await reconciles(first)).toBeGreaterThan(0);
    expect(await reconciles(second)).toBe(0);

    process.kill(first.child.pid!, 'SIGTERM');
    expect(await first.exited).toBe(0);
    await eventually(async () => expect(await holder(), second.output()).toBe('operator-b'), 20_000);
    expect(await leaderMetric(second)).toBe('1');
    await createProxy('after');
    await eventually(() => deploymentOf('after'), 20_000);

    process.kill(second.child.pid!, 'SIGTERM');
    expect(await second.exited).toBe(0);
  }, 150_000);
});
