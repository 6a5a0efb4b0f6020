/**
 * Leader election between two controller instances on a real Lease: one leads and only it
 * reconciles; a graceful stop releases the Lease so the standby takes over at once; a leader killed
 * by PID (in a child process) is replaced once its lease expires.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  LEASES,
  CONFIG_MAPS,
  collectionPath,
  objectPath,
  type KubeObject,
} from '../../../src/operator/controller/resource.js';
import { runController, type Controller } from '../../../src/operator/controller/run.js';
import { kubeConfig } from '../../support/kube-cluster.js';
import {
  FAST_ELECTION,
  adminClient,
  captureLog,
  createNamespace,
  eventually,
  serviceAccountToken,
} from '../../support/kube-controller.js';

const CHILD = fileURLToPath(new URL('../../support/kube-controller.ts', import.meta.url));
const started: Controller[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
  }
  await Promise.all(started.splice(0).map((c) => c.stop()));
});

/** A controller in a child process, leading Lease `elect` in `ns` as `child-process`; killed after each test. */
function spawnLeaderChild(ns: string): ChildProcessByStdio<null, Readable, Readable> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      MOAT_TEST_NAMESPACE: ns,
      MOAT_TEST_LEASE: 'elect',
      MOAT_TEST_IDENTITY: 'child-process',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

type Lease = KubeObject & { spec?: { holderIdentity?: string; leaseTransitions?: number } };
const holder = async (ns: string, lease: string) =>
  (await adminClient().get<Lease>(objectPath(LEASES, ns, lease))).spec?.holderIdentity;

async function instance(
  ns: string,
  identity: string,
  reconciled: string[],
  token?: string,
): Promise<Controller> {
  const controller = await runController({
    name: 'elect',
    kubeConfig: kubeConfig(token),
    primary: CONFIG_MAPS,
    namespaces: [ns],
    leaderElection: { namespace: ns, leaseName: 'elect', identity, ...FAST_ELECTION },
    probes: { port: 0 },
    log: captureLog().log,
    reconcile: (key) => Promise.resolve(void reconciled.push(key)),
  });
  started.push(controller);
  return controller;
}

describe('leader election on a Lease', () => {
  it('one instance leads and reconciles; on release the other takes over at once', async () => {
    const ns = await createNamespace('elect');
    const seenA: string[] = [];
    const seenB: string[] = [];
    const a = await instance(ns, 'instance-a', seenA);
    await eventually(() => expect(a.isLeader()).toBe(true));
    const b = await instance(ns, 'instance-b', seenB);
    await b.waitForSync(10_000);
    // The standby is ready (caches synced) though it does not lead.
    expect((await fetch(`http://127.0.0.1:${b.probePort}/readyz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${b.probePort}/metrics`)).text()).toContain(
      'moat_operator_leader{controller="elect"} 0',
    );

    await adminClient().create(collectionPath(CONFIG_MAPS, ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'one' },
    });
    await eventually(() => expect(seenA).toContain(`${ns}/one`));
    await new Promise((r) => setTimeout(r, 3 * FAST_ELECTION.retryPeriodMs));
    expect(b.isLeader()).toBe(false);
    expect(seenB).toEqual([]);
    expect(await holder(ns, 'elect')).toBe('instance-a');

    const stopped = Date.now();
    await a.stop();
    await eventually(() => expect(b.isLeader()).toBe(true), 5_000, 20);
    // Released, so no waiting for the lease to expire: about one retry period.
    expect(Date.now() - stopped).toBeLessThan(FAST_ELECTION.leaseDurationMs);
    expect(await holder(ns, 'elect')).toBe('instance-b');
    // The new leader looks at every object afresh.
    await eventually(() => expect(seenB).toContain(`${ns}/one`));
  });

  it('when the leader process is killed, the other takes over after the lease expires', async () => {
    const ns = await createNamespace('elect-kill');
    const child = spawnLeaderChild(ns);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    await eventually(async () => expect(await holder(ns, 'elect')).toBe('child-process'), 40_000, 100).catch(
      (err: unknown) => {
        throw new Error(`the child controller did not lead: ${String(err)}\n${output}`);
      },
    );

    const survivor = await instance(ns, 'survivor', []);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(survivor.isLeader()).toBe(false);

    const killed = Date.now();
    process.kill(child.pid!, 'SIGKILL');
    await eventually(() => expect(survivor.isLeader()).toBe(true), 10_000, 20);
    const tookMs = Date.now() - killed;
    // Not released, so the survivor waits out the lease (measured from its last sight of a renewal).
    expect(tookMs).toBeGreaterThanOrEqual(FAST_ELECTION.leaseDurationMs - 2 * FAST_ELECTION.retryPeriodMs);
    expect(tookMs).toBeLessThan(FAST_ELECTION.leaseDurationMs + 2_000);
    const lease = await adminClient().get<Lease>(objectPath(LEASES, ns, 'elect'));
    expect(lease.spec).toMatchObject({ holderIdentity: 'survivor', leaseTransitions: 1 });
  }, 90_000);

  it('a graceful SIGTERM of the leader process releases the lease', async () => {
    const ns = await createNamespace('elect-term');
    const child = spawnLeaderChild(ns);
    await eventually(async () => expect(await holder(ns, 'elect')).toBe('child-process'), 40_000, 100);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    process.kill(child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(await holder(ns, 'elect')).toBe('');
  }, 90_000);
  it('a leader that cannot renew within the renew deadline stops leading and stops reconciling', async () => {
    const ns = await createNamespace('elect-lose');
    const configMaps = { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] };
    const token = await serviceAccountToken(ns, 'leader', [
      configMaps,
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ]);
    const seen: string[] = [];
    const leader = await instance(ns, 'doomed', seen, token);
    await eventually(() => expect(leader.isLeader()).toBe(true));
    // Take the "update" verb away: every renewal is now refused by RBAC.
    const roles = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      plural: 'roles',
      namespaced: true,
    };
    const revoked = Date.now();
    await adminClient().mergePatch(objectPath(roles, ns, 'leader'), {
      rules: [configMaps, { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] }],
    });
    await eventually(() => expect(leader.isLeader()).toBe(false), 10_000, 20);
    expect(Date.now() - revoked).toBeGreaterThanOrEqual(
      FAST_ELECTION.renewDeadlineMs - FAST_ELECTION.retryPeriodMs,
    );
    expect(leader.metrics.leader.render().join('\n')).toContain('moat_operator_leader{controller="elect"} 0');
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'late' },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(seen).not.toContain(`${ns}/late`);
  });
});
