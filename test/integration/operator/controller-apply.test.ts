/**
 * Writing desired state on the real API server: server-side apply is idempotent and takes back a
 * hand edit (through the owner mapping of a running controller), status goes through `/status`,
 * undesired owned objects are deleted, finalizers survive conflicts, and Events aggregate.
 */
import { describe, expect, it } from 'vitest';
import {
  addFinalizer,
  applyObject,
  applyStatus,
  controllerReference,
  deleteUndesired,
  ownedBy,
  removeFinalizer,
} from '../../../src/operator/controller/apply.js';
import { isStatus } from '../../../src/operator/controller/client.js';
import { EventRecorder, REPORTING_CONTROLLER } from '../../../src/operator/controller/events.js';
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  EVENTS,
  SECRETS,
  collectionPath,
  objectPath,
  parseKey,
  type KubeObject,
} from '../../../src/operator/controller/resource.js';
import { runController, type Controller } from '../../../src/operator/controller/run.js';
import { kubeConfig } from '../../support/kube-cluster.js';
import { adminClient, captureLog, createNamespace, eventually } from '../../support/kube-controller.js';
import { stoppedAfterEach } from '../../support/stop-after-each.js';

const started = stoppedAfterEach<Controller>();

function deployment(namespace: string, name: string, image: string): KubeObject {
  return {
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'moat', image, env: [{ name: 'MODE', value: 'desired' }] }] },
      },
    },
  };
}

type Container = { image: string; env?: { name: string; value: string }[] };
const containerOf = (d: KubeObject) =>
  (d.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;

describe('server-side apply', () => {
  it('applying the same desired object twice changes nothing', async () => {
    const ns = await createNamespace('apply-idem');
    const client = adminClient();
    const first = await applyObject(client, DEPLOYMENTS, deployment(ns, 'web', 'example.test/web:1'));
    const second = await applyObject(client, DEPLOYMENTS, deployment(ns, 'web', 'example.test/web:1'));
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    const changed = await applyObject(client, DEPLOYMENTS, deployment(ns, 'web', 'example.test/web:2'));
    expect(changed.metadata?.resourceVersion).not.toBe(first.metadata?.resourceVersion);
    expect(containerOf(changed).image).toBe('example.test/web:2');
    const managers = (changed.metadata as { managedFields?: { manager: string }[] }).managedFields ?? [];
    expect(managers.map((m) => m.manager)).toContain('moat-operator');
  });

  it('a running controller puts a hand-edited owned Deployment back, and recreates a deleted one', async () => {
    const ns = await createNamespace('apply-drift');
    const admin = adminClient();
    const controller = await runController({
      name: 'drift',
      kubeConfig: kubeConfig(),
      primary: CONFIG_MAPS,
      owns: [DEPLOYMENTS],
      namespaces: [ns],
      leaderElection: false,
      probes: false,
      log: captureLog().log,
      // The reconciler: one Deployment per ConfigMap, image from its data, owned by it.
      reconcile: async (key, ctx) => {
        const { namespace, name } = parseKey(key);
        const owner = ctx.cache.get(CONFIG_MAPS, name, namespace);
        if (!owner) return;
        const image = (owner.data as Record<string, string>).image!;
        await applyObject(ctx.client, DEPLOYMENTS, ownedBy(deployment(namespace!, name, image), owner));
      },
    });
    started.push(controller);
    const owner = await admin.create(collectionPath(CONFIG_MAPS, ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app' },
      data: { image: 'example.test/app:1' },
    });
    const path = objectPath(DEPLOYMENTS, ns, 'app');
    const created = await eventually(() => admin.get(path));
    expect(created.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'app',
        uid: owner.metadata!.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);

    // A person edits the image and the env by hand (a JSON merge patch as kubectl edit would send).
    await admin.mergePatch(path, {
      spec: {
        template: {
          spec: {
            containers: [{ name: 'moat', image: 'evil.test/x:1', env: [{ name: 'MODE', value: 'hand' }] }],
          },
        },
      },
    });
    await eventually(async () => {
      const repaired = await admin.get(path);
      expect(containerOf(repaired).image).toBe('example.test/app:1');
      expect(containerOf(repaired).env).toEqual([{ name: 'MODE', value: 'desired' }]);
    });

    // No garbage collector runs here, so the owner mapping of the delete event is what brings it back.
    const before = await admin.get(path);
    await admin.delete(path);
    await eventually(async () => {
      const again = await admin.get(path);
      expect(again.metadata?.uid).not.toBe(before.metadata?.uid);
    });

    // A change of the owner rolls the desired state forward.
    await admin.mergePatch(objectPath(CONFIG_MAPS, ns, 'app'), { data: { image: 'example.test/app:2' } });
    await eventually(async () => expect(containerOf(await admin.get(path)).image).toBe('example.test/app:2'));
  });

  it('writes status only through /status, as a kubelet-side controller would for a Deployment', async () => {
    const ns = await createNamespace('apply-status');
    const client = adminClient();
    // Status sent with the main object is ignored by the API server.
    await applyObject(client, DEPLOYMENTS, {
      ...deployment(ns, 'web', 'example.test/web:1'),
      status: { replicas: 9 },
    });
    expect((await client.get(objectPath(DEPLOYMENTS, ns, 'web'))).status).not.toHaveProperty('replicas');
    // No kubelet or controller-manager runs here: the test writes what they would observe.
    const status = {
      observedGeneration: 1,
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      updatedReplicas: 1,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          lastUpdateTime: '2026-01-01T00:00:00Z',
        },
      ],
    };
    await applyStatus(client, DEPLOYMENTS, { metadata: { name: 'web', namespace: ns } }, status);
    const stored = await client.get(objectPath(DEPLOYMENTS, ns, 'web'));
    expect(stored.status).toMatchObject({ readyReplicas: 1, availableReplicas: 1 });
    expect((stored.status as { conditions: { type: string; status: string }[] }).conditions).toContainEqual(
      expect.objectContaining({ type: 'Available', status: 'True' }),
    );
    // Applying a status without a field we wrote before removes it: we own what we applied.
    const { updatedReplicas: _dropped, ...withoutUpdated } = status;
    await applyStatus(client, DEPLOYMENTS, stored, withoutUpdated);
    const after = (await client.get(objectPath(DEPLOYMENTS, ns, 'web'))).status;
    expect(after).not.toHaveProperty('updatedReplicas');
    expect(after).toMatchObject({ readyReplicas: 1 });
  });

  it('deletes owned objects that are no longer desired, and nothing else', async () => {
    const ns = await createNamespace('apply-prune');
    const client = adminClient();
    const owner = await client.create(collectionPath(CONFIG_MAPS, ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner' },
    });
    const secret = (name: string, labelled: boolean, owned: boolean): KubeObject => ({
      metadata: {
        name,
        namespace: ns,
        ...(labelled ? { labels: { 'app.kubernetes.io/managed-by': 'moat-test' } } : {}),
        ...(owned ? { ownerReferences: [controllerReference(owner)] } : {}),
      },
      stringData: { k: 'v' },
    });
    await applyObject(client, SECRETS, secret('keep', true, true));
    await applyObject(client, SECRETS, secret('stale', true, true));
    await applyObject(client, SECRETS, secret('unlabelled', false, true));
    await applyObject(client, SECRETS, secret('not-ours', true, false));
    const deleted = await deleteUndesired(
      client,
      SECRETS,
      ns,
      owner,
      'app.kubernetes.io/managed-by=moat-test',
      ['keep'],
    );
    expect(deleted).toEqual(['stale']);
    const left = (await client.list(collectionPath(SECRETS, ns))).items.map((s) => s.metadata?.name).sort();
    expect(left).toEqual(['keep', 'not-ours', 'unlabelled']);
  });

  it('adds and removes finalizers, retrying on a stale resourceVersion, and they hold deletion', async () => {
    const ns = await createNamespace('apply-fin');
    const client = adminClient();
    const path = objectPath(CONFIG_MAPS, ns, 'guarded');
    const stale = await client.create(collectionPath(CONFIG_MAPS, ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'guarded' },
    });
    await client.mergePatch(path, { data: { moved: 'on' } });
    // `stale` has an old resourceVersion: the first write gets 409 and is retried on a fresh read.
    await addFinalizer(client, CONFIG_MAPS, stale, 'moat.dev/test');
    await addFinalizer(client, CONFIG_MAPS, stale, 'moat.dev/test');
    await addFinalizer(client, CONFIG_MAPS, stale, 'moat.dev/other');
    expect((await client.get(path)).metadata?.finalizers).toEqual(['moat.dev/test', 'moat.dev/other']);

    await client.delete(path);
    const terminating = await client.get(path);
    expect(terminating.metadata?.deletionTimestamp).toBeTruthy();
    await removeFinalizer(client, CONFIG_MAPS, stale, 'moat.dev/test');
    expect((await client.get(path)).metadata?.finalizers).toEqual(['moat.dev/other']);
    await removeFinalizer(client, CONFIG_MAPS, stale, 'moat.dev/other');
    const gone = await client.get(path).then(
      () => false,
      (err: unknown) => isStatus(err, 404),
    );
    expect(gone).toBe(true);
    // Removing from an object that is gone is done, not an error.
    expect(await removeFinalizer(client, CONFIG_MAPS, stale, 'moat.dev/other')).toBeUndefined();
  });
});

describe('event recorder', () => {
  it('aggregates repeats into one Event with a count, and forgets beyond its bound', async () => {
    const ns = await createNamespace('events');
    const client = adminClient();
    const involved = await client.create(collectionPath(CONFIG_MAPS, ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'subject' },
    });
    const recorder = new EventRecorder({
      client,
      log: captureLog().log,
      instance: 'test-1',
      maxRemembered: 2,
    });
    const events = async () =>
      (await client.list(collectionPath(EVENTS, ns))).items as (KubeObject & {
        reason: string;
        message: string;
        count: number;
      })[];

    // Concurrent repeats (two workers failing alike) still make one Event.
    await Promise.all(
      [1, 2, 3].map(() =>
        recorder.record(involved, 'Warning', 'ValidationFailed', 'remoteUrl is not allowed'),
      ),
    );
    let list = await events();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      type: 'Warning',
      reason: 'ValidationFailed',
      message: 'remoteUrl is not allowed',
      count: 3,
      reportingComponent: REPORTING_CONTROLLER,
      reportingInstance: 'test-1',
      involvedObject: { kind: 'ConfigMap', name: 'subject', namespace: ns, uid: involved.metadata!.uid },
    });

    await recorder.record(involved, 'Normal', 'Ready', 'all objects applied');
    await recorder.record(involved, 'Warning', 'ValidationFailed', 'another message');
    list = await events();
    expect(list.map((e) => `${e.reason}:${e.message}:${e.count}`).sort()).toEqual([
      'Ready:all objects applied:1',
      'ValidationFailed:another message:1',
      'ValidationFailed:remoteUrl is not allowed:3',
    ]);
    // Only two are remembered: the first one was forgotten, so its repeat starts a new Event.
    await recorder.record(involved, 'Warning', 'ValidationFailed', 'remoteUrl is not allowed');
    expect(await events()).toHaveLength(4);
  });
});
