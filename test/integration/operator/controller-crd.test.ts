/**
 * The machinery on a custom resource, as the MCPRemoteProxy reconciler will use it: a throwaway
 * CRD (not ours) watched right after it is established (when the first watch may get 429 and is
 * restarted), its status written through its /status subresource, and a finalizer guarding deletion.
 */
import { describe, expect, it } from 'vitest';
import {
  addFinalizer,
  applyObject,
  applyStatus,
  removeFinalizer,
} from '../../../src/operator/controller/apply.js';
import { isStatus } from '../../../src/operator/controller/client.js';
import {
  objectPath,
  parseKey,
  type KubeObject,
  type ResourceType,
} from '../../../src/operator/controller/resource.js';
import { runController, type Controller } from '../../../src/operator/controller/run.js';
import { kubeConfig } from '../../support/kube-cluster.js';
import { adminClient, captureLog, createNamespace, eventually } from '../../support/kube-controller.js';
import { stoppedAfterEach } from '../../support/stop-after-each.js';

const started = stoppedAfterEach<Controller>();

async function createWidgetCrd(): Promise<ResourceType> {
  const group = `w${Date.now().toString(36)}.test.moat.dev`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { size: { type: 'integer' } } },
                status: {
                  type: 'object',
                  properties: { phase: { type: 'string' }, observedGeneration: { type: 'integer' } },
                },
              },
            },
          },
        },
      ],
    },
  };
  const client = adminClient();
  await client.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  await eventually(async () => {
    const stored = await client.get<
      KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
    >(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`);
    expect(stored.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Established', status: 'True' }),
    );
  });
  return { apiVersion: `${group}/v1`, kind: 'Widget', plural: 'widgets', namespaced: true };
}

describe('controller on a custom resource', () => {
  it('watches a just-established CRD, writes status through /status, and guards deletion with a finalizer', async () => {
    const widgets = await createWidgetCrd();
    const ns = await createNamespace('ctl-crd');
    const finalizer = 'test.moat.dev/cleanup';
    const cleanedUp: string[] = [];
    const controller = await runController({
      name: 'widgets',
      kubeConfig: kubeConfig(),
      primary: widgets,
      namespaces: [ns],
      leaderElection: false,
      probes: false,
      log: captureLog().log,
      reconcile: async (key, ctx) => {
        const { namespace, name } = parseKey(key);
        const widget = ctx.cache.get(widgets, name, namespace);
        if (!widget) return;
        if (widget.metadata?.deletionTimestamp) {
          cleanedUp.push(key);
          await removeFinalizer(ctx.client, widgets, widget, finalizer);
          return;
        }
        await addFinalizer(ctx.client, widgets, widget, finalizer);
        const size = (widget.spec as { size: number }).size;
        await applyStatus(ctx.client, widgets, widget, {
          phase: size > 0 ? 'Ready' : 'Failed',
          observedGeneration: widget.metadata?.generation,
        });
      },
    });
    started.push(controller);
    await controller.waitForSync(20_000);

    const client = adminClient();
    await applyObject(client, widgets, { metadata: { name: 'w1', namespace: ns }, spec: { size: 3 } });
    const path = objectPath(widgets, ns, 'w1');
    await eventually(async () => {
      const stored = await client.get(path);
      expect(stored.status).toEqual({ phase: 'Ready', observedGeneration: 1 });
      expect(stored.metadata?.finalizers).toEqual([finalizer]);
    });

    // A spec change bumps the generation; status follows from the new observation.
    await client.mergePatch(path, { spec: { size: 0 } });
    await eventually(async () =>
      expect((await client.get(path)).status).toEqual({ phase: 'Failed', observedGeneration: 2 }),
    );

    await client.delete(path);
    await eventually(async () => {
      const gone = await client.get(path).then(
        () => false,
        (err: unknown) => isStatus(err, 404),
      );
      expect(gone).toBe(true);
    });
    expect(cleanedUp).toContain(`${ns}/w1`);
  });
});
