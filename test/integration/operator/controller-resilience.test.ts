/**
 * Informers recover by themselves: after the API server connection drops and stays refused for a
 * while (through a loopback TCP relay the test can cut), and after an RBAC gap is fixed. Changes
 * made meanwhile are still reconciled.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { CONFIG_MAPS, collectionPath, objectPath } from '../../../src/operator/controller/resource.js';
import { runController, type Controller } from '../../../src/operator/controller/run.js';
import { kubeCluster, kubeConfig } from '../../support/kube-cluster.js';
import {
  adminClient,
  captureLog,
  createNamespace,
  eventually,
  serviceAccountToken,
} from '../../support/kube-controller.js';

const started: Controller[] = [];
const relays: Server[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => c.stop()));
  for (const relay of relays.splice(0)) relay.close();
});

/** A TCP relay to the API server that can be cut (connections destroyed, new ones refused) and restored. */
async function relay(): Promise<{ url: string; cut: () => Promise<void>; restore: () => Promise<void> }> {
  const target = new URL(kubeCluster().url);
  const sockets = new Set<Socket>();
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      const server = createServer((client) => {
        const upstream = connect(Number(target.port), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      relays.push(server);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  return {
    url: `https://127.0.0.1:${port}`,
    cut: async () => {
      const server = relays.pop()!;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    restore: listen,
  };
}

function configVia(url: string): KubeConfig {
  const { caFile, adminToken } = kubeCluster();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'relay', server: url, caFile, skipTLSVerify: false }],
    users: [{ name: 'admin', token: adminToken }],
    contexts: [{ name: 'relay', cluster: 'relay', user: 'admin' }],
    currentContext: 'relay',
  });
  return kc;
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

describe('informer recovery', () => {
  it('re-lists and re-watches after the connection drops and is refused for a while', async () => {
    const ns = await createNamespace('ctl-drop');
    const link = await relay();
    const { log, lines } = captureLog();
    const seen: string[] = [];
    const controller = await runController({
      name: 'drop',
      kubeConfig: configVia(link.url),
      primary: CONFIG_MAPS,
      namespaces: [ns],
      leaderElection: false,
      probes: false,
      log,
      reconcile: (key) => Promise.resolve(void seen.push(key)),
    });
    started.push(controller);
    await controller.waitForSync(10_000);
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap('before'));
    await eventually(() => expect(seen).toContain(`${ns}/before`));

    await link.cut();
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap('during'));
    await eventually(
      () => expect(lines().some((l) => l.msg === 'informer failed; restarting')).toBe(true),
      40_000,
      100,
    );
    await link.restore();
    await eventually(() => expect(seen).toContain(`${ns}/during`), 40_000, 100);
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap('after'));
    await eventually(() => expect(seen).toContain(`${ns}/after`), 10_000);
  });

  it('becomes ready by itself once a missing RBAC verb is granted', async () => {
    const ns = await createNamespace('ctl-grant');
    const token = await serviceAccountToken(ns, 'late', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]);
    const seen: string[] = [];
    const controller = await runController({
      name: 'grant',
      kubeConfig: kubeConfig(token),
      primary: CONFIG_MAPS,
      namespaces: [ns],
      leaderElection: false,
      probes: false,
      log: captureLog().log,
      reconcile: (key) => Promise.resolve(void seen.push(key)),
    });
    started.push(controller);
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap('waiting'));
    await expect(controller.waitForSync(1_000)).rejects.toThrow(/lacks the "watch" verb/);
    expect(seen).toEqual([]);
    await adminClient().mergePatch(
      objectPath(
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', plural: 'roles', namespaced: true },
        ns,
        'late',
      ),
      {
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
      },
    );
    await controller.waitForSync(40_000);
    await eventually(() => expect(seen).toContain(`${ns}/waiting`));
  });
  it('a stop while the first list is in flight leaves no watch running', async () => {
    const ns = await createNamespace('ctl-early-stop');
    const controller = await runController({
      name: 'early',
      kubeConfig: kubeConfig(),
      primary: CONFIG_MAPS,
      namespaces: [ns],
      leaderElection: false,
      probes: false,
      log: captureLog().log,
      reconcile: () => Promise.resolve(),
    });
    await controller.stop();
    await new Promise((r) => setTimeout(r, 300));
    await adminClient().create(collectionPath(CONFIG_MAPS, ns), configMap('after-stop'));
    await new Promise((r) => setTimeout(r, 500));
    // A watch left open would have put the new object into the cache.
    expect(controller.cache.list(CONFIG_MAPS, ns).map((cm) => cm.metadata?.name)).toEqual([]);
  });
});
