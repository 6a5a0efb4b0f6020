/**
 * The controller machinery on the real API server: informers feed the queue, updates that arrive
 * while a key is being reconciled collapse into one more reconcile, a Secret's change requeues the
 * ConfigMaps that name it, probes and metrics answer, and RBAC gaps show up as errors naming the
 * missing permission.
 */
import { describe, expect, it } from 'vitest';
import { applyObject } from '../../../src/operator/controller/apply.js';
import { KubeClient } from '../../../src/operator/controller/client.js';
import {
  CONFIG_MAPS,
  SECRETS,
  collectionPath,
  objectKey,
  objectPath,
  type KubeObject,
} from '../../../src/operator/controller/resource.js';
import {
  runController,
  type Controller,
  type ControllerOptions,
} from '../../../src/operator/controller/run.js';
import { kubeConfig } from '../../support/kube-cluster.js';
import {
  adminClient,
  captureLog,
  createNamespace,
  eventually,
  serviceAccountToken,
} from '../../support/kube-controller.js';
import { stoppedAfterEach } from '../../support/stop-after-each.js';

const started = stoppedAfterEach<Controller>();

async function start(
  options: Partial<ControllerOptions> & Pick<ControllerOptions, 'reconcile' | 'namespaces'>,
) {
  const controller = await runController({
    name: 'cm-test',
    kubeConfig: kubeConfig(),
    primary: CONFIG_MAPS,
    leaderElection: false,
    probes: { port: 0 },
    log: captureLog().log,
    backoff: { baseMs: 20, maxMs: 200 },
    ...options,
  });
  started.push(controller);
  return controller;
}

function configMap(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

const counter = () => {
  const counts = new Map<string, number>();
  return {
    counts,
    bump: (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1),
    of: (key: string) => counts.get(key) ?? 0,
  };
};

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('controller watch → queue → reconcile', () => {
  it('reconciles each ConfigMap, and updates made during a reconcile collapse into one more', async () => {
    const ns = await createNamespace('ctl-dedup');
    const admin = adminClient();
    const seen = counter();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const controller = await start({
      namespaces: [ns],
      workers: 2,
      reconcile: async (key) => {
        seen.bump(key);
        if (key === `${ns}/slow` && seen.of(key) === 1) await gate;
      },
    });
    await controller.waitForSync(10_000);
    await admin.create(collectionPath(CONFIG_MAPS, ns), configMap(ns, 'slow', { v: '0' }));
    await admin.create(collectionPath(CONFIG_MAPS, ns), configMap(ns, 'other', { v: '0' }));
    await eventually(() => expect(seen.of(`${ns}/slow`)).toBe(1));
    await eventually(() => expect(seen.of(`${ns}/other`)).toBe(1));
    // Five updates while the first reconcile of "slow" is held: the key is marked dirty, not run again.
    for (let v = 1; v <= 5; v++)
      await admin.mergePatch(objectPath(CONFIG_MAPS, ns, 'slow'), { data: { v: String(v) } });
    await eventually(() =>
      expect(controller.metrics.reconciles.get({ controller: 'cm-test', result: 'success' })).toBe(1),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.of(`${ns}/slow`)).toBe(1);
    release();
    await eventually(() => expect(seen.of(`${ns}/slow`)).toBe(2));
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.of(`${ns}/slow`)).toBe(2);
    // The cache holds the latest version the reconciler will read.
    expect((controller.cache.get(CONFIG_MAPS, 'slow', ns)?.data as Record<string, string>).v).toBe('5');
  });

  it('watches only the listed namespaces', async () => {
    const [mine, theirs] = [await createNamespace('ctl-mine'), await createNamespace('ctl-theirs')];
    const seen = counter();
    const controller = await start({
      namespaces: [mine],
      reconcile: (key) => Promise.resolve(void seen.bump(key)),
    });
    await controller.waitForSync(10_000);
    await adminClient().create(collectionPath(CONFIG_MAPS, theirs), configMap(theirs, 'ignored', {}));
    await adminClient().create(collectionPath(CONFIG_MAPS, mine), configMap(mine, 'seen', {}));
    await eventually(() => expect(seen.of(`${mine}/seen`)).toBe(1));
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.of(`${theirs}/ignored`)).toBe(0);
  });

  it('a Secret change requeues exactly the ConfigMaps that name it', async () => {
    const ns = await createNamespace('ctl-related');
    const admin = adminClient();
    const seen = counter();
    const controller = await start({
      namespaces: [ns],
      watches: [
        {
          type: SECRETS,
          // The relation a reconciler knows: "every primary whose data names this Secret".
          toKeys: (secret, cache) =>
            cache
              .list(CONFIG_MAPS, secret.metadata?.namespace)
              .filter(
                (cm) => (cm.data as Record<string, string> | undefined)?.secretName === secret.metadata?.name,
              )
              .map(objectKey),
        },
      ],
      reconcile: (key) => Promise.resolve(void seen.bump(key)),
    });
    await controller.waitForSync(10_000);
    for (const [name, secretName] of [
      ['a', 's1'],
      ['b', 's2'],
      ['c', 's1'],
    ]) {
      await admin.create(collectionPath(CONFIG_MAPS, ns), configMap(ns, name!, { secretName: secretName! }));
    }
    await eventually(() =>
      expect([seen.of(`${ns}/a`), seen.of(`${ns}/b`), seen.of(`${ns}/c`)]).toEqual([1, 1, 1]),
    );
    await admin.create(collectionPath(SECRETS, ns), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1' },
      stringData: { k: 'v' },
    });
    await eventually(() => expect([seen.of(`${ns}/a`), seen.of(`${ns}/c`)]).toEqual([2, 2]));
    await admin.mergePatch(objectPath(SECRETS, ns, 's1'), { stringData: { k: 'changed' } });
    await eventually(() => expect([seen.of(`${ns}/a`), seen.of(`${ns}/c`)]).toEqual([3, 3]));
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.of(`${ns}/b`)).toBe(1);
  });

  it('retries a failing reconcile with backoff, requeues on request, and reports it all in /metrics', async () => {
    const ns = await createNamespace('ctl-metrics');
    const seen = counter();
    const controller = await start({
      namespaces: [ns],
      reconcile: (key) => {
        seen.bump(key);
        if (key.endsWith('/flaky') && seen.of(key) <= 2) return Promise.reject(new Error('not yet'));
        if (key.endsWith('/poll') && seen.of(key) === 1) return Promise.resolve({ requeueAfter: 50 });
        return Promise.resolve();
      },
    });
    const port = controller.probePort!;
    expect(await get(port, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    await controller.waitForSync(10_000);
    expect(await get(port, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap(ns, 'flaky', {}));
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap(ns, 'poll', {}));
    await eventually(() => expect([seen.of(`${ns}/flaky`), seen.of(`${ns}/poll`)]).toEqual([3, 2]));

    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await res.text();
    expect(text).toContain('moat_operator_reconcile_total{controller="cm-test",result="error"} 2');
    expect(text).toContain('moat_operator_reconcile_total{controller="cm-test",result="requeue"} 1');
    expect(text).toContain('moat_operator_reconcile_total{controller="cm-test",result="success"} 2');
    expect(text).toContain('moat_operator_workqueue_retries_total{controller="cm-test"} 2');
    expect(text).toContain('moat_operator_reconcile_duration_seconds_count{controller="cm-test"} 5');
    expect(text).toContain('moat_operator_workqueue_depth{controller="cm-test"} 0');
    expect(text).toContain('moat_operator_leader{controller="cm-test"} 1');
    expect(text).toMatch(/moat_operator_build_info\{version="dev",node="v\d+/);
    expect((await get(port, '/nope')).status).toBe(404);
  });
});

describe('controller under a ServiceAccount with RBAC', () => {
  it('without the watch verb it never becomes ready, and says which permission is missing', async () => {
    const ns = await createNamespace('ctl-nowatch');
    const token = await serviceAccountToken(ns, 'no-watch', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]);
    const controller = await start({
      namespaces: [ns],
      kubeConfig: kubeConfig(token),
      reconcile: () => Promise.resolve(),
    });
    await expect(controller.waitForSync(1_500)).rejects.toThrow(
      /configmaps: watch .*403 Forbidden \(the account lacks the "watch" verb/,
    );
    const ready = await get(controller.probePort!, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toContain('lacks the "watch" verb');
  });

  it('without the list verb the API server message names the verb and the account', async () => {
    const ns = await createNamespace('ctl-nolist');
    const token = await serviceAccountToken(ns, 'no-list', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'watch'] },
    ]);
    const controller = await start({
      namespaces: [ns],
      kubeConfig: kubeConfig(token),
      reconcile: () => Promise.resolve(),
    });
    await expect(controller.waitForSync(1_500)).rejects.toThrow(
      `User "system:serviceaccount:${ns}:no-list" cannot list resource "configmaps"`,
    );
  });

  it('a reconcile whose write is not allowed fails visibly, naming the missing verb', async () => {
    const ns = await createNamespace('ctl-nopatch');
    const token = await serviceAccountToken(ns, 'no-patch', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
    ]);
    const { log, lines } = captureLog();
    const controller = await start({
      namespaces: [ns],
      kubeConfig: kubeConfig(token),
      log,
      reconcile: async (key, ctx) => {
        const [namespace, name] = key.split('/');
        await ctx.client.mergePatch(objectPath(CONFIG_MAPS, namespace, name!), {
          metadata: { labels: { seen: 'yes' } },
        });
      },
    });
    await controller.waitForSync(10_000);
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap(ns, 'target', {}));
    const failure = await eventually(() => {
      const line = lines().find((l) => l.msg === 'reconcile failed');
      expect(line).toBeDefined();
      return line!;
    });
    expect(failure.err).toContain(
      `cannot patch resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
    expect(controller.metrics.reconciles.get({ controller: 'cm-test', result: 'error' })).toBeGreaterThan(0);
    const stored = await new KubeClient(kubeConfig()).get(objectPath(CONFIG_MAPS, ns, 'target'));
    expect(stored.metadata?.labels?.seen).toBeUndefined();
  });
  it('server-side apply of a new object needs "create" besides "patch"; an existing one only "patch"', async () => {
    const ns = await createNamespace('ctl-ssa-rbac');
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap(ns, 'exists', {}));
    const token = await serviceAccountToken(ns, 'patch-only', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch'] },
    ]);
    const client = new KubeClient(kubeConfig(token));
    const updated = await applyObject(client, CONFIG_MAPS, configMap(ns, 'exists', { k: 'v' }));
    expect(updated.data).toEqual({ k: 'v' });
    await expect(applyObject(client, CONFIG_MAPS, configMap(ns, 'new', {}))).rejects.toThrow(
      `cannot create resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
  });
});
