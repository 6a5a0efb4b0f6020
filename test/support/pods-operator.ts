/**
 * `moat operator` run the way the Helm chart runs it: a container of the operator image
 * (test/support/moat-image.ts) with `args: ["operator", …]`, as UID 65532 on a read-only root
 * filesystem, under its own ServiceAccount token bound to the shipped RBAC. It reaches the test
 * API server on the host's loopback through host networking, and names the proxy image as
 * `--proxy-image`, so the pods played from its Deployments run that image.
 */
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeCluster } from './kube-cluster.js';
import { eventually } from './kube-controller.js';
import { IMAGE_UID } from './moat-image.js';
import { prepareOperatorNamespace } from './moat-operator.js';
import { containerLogs, podman } from './pods.js';
import { freePort } from './ports.js';

const IN_CONTAINER_DIR = '/var/run/moat-test-kube';

/** The operator's image and the one it names for the proxy pods. */
export interface MoatImages {
  operator: string;
  proxy: string;
}

export interface OperatorContainer {
  namespace: string;
  images: MoatImages;
  /** The operator's output (JSON log lines), for failure messages. */
  logs(): Promise<string>;
  /** Stops (SIGTERM, bounded) and removes the container. */
  stop(): Promise<void>;
}

/** A fresh namespace watched by the operator in a container of its image; resolves once /readyz is 200. */
export async function startOperatorContainer(
  prefix: string,
  images: MoatImages,
  workDir: string,
): Promise<OperatorContainer> {
  const { namespace, token } = await prepareOperatorNamespace(prefix);
  const { url, caFile } = kubeCluster();
  // Readable by the container's UID: the test's own ServiceAccount token and the cluster's CA.
  const dir = join(workDir, 'operator-kube');
  mkdirSync(dir, { recursive: true });
  chmodSync(workDir, 0o755);
  chmodSync(dir, 0o755);
  copyFileSync(caFile, join(dir, 'ca.crt'));
  chmodSync(join(dir, 'ca.crt'), 0o644);
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'test', cluster: { server: url, 'certificate-authority': `${IN_CONTAINER_DIR}/ca.crt` } },
    ],
    users: [{ name: 'operator', user: { token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'operator' } }],
    'current-context': 'test',
  };
  writeFileSync(join(dir, 'config'), JSON.stringify(kubeconfig), { mode: 0o644 });
  const probePort = await freePort();
  const name = `${namespace}-operator`;
  const container: OperatorContainer = {
    namespace,
    images,
    logs: () => containerLogs(name),
    stop: async () => {
      await podman(['rm', '--force', '--ignore', '--time', '10', name]).catch(() => undefined);
    },
  };
  await podman([
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'host',
    '--user',
    `${IMAGE_UID}:${IMAGE_UID}`,
    '--read-only',
    '--cap-drop',
    'ALL',
    '--volume',
    `${dir}:${IN_CONTAINER_DIR}:ro`,
    '--env',
    `KUBECONFIG=${IN_CONTAINER_DIR}/config`,
    '--env',
    `POD_NAMESPACE=${namespace}`,
    images.operator,
    'operator',
    '--namespace',
    namespace,
    '--probe-port',
    String(probePort),
    '--probe-host',
    '127.0.0.1',
    '--proxy-image',
    images.proxy,
  ]);
  try {
    await eventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${probePort}/readyz`, {
          signal: AbortSignal.timeout(2_000),
        });
        if (res.status !== 200) throw new Error(`/readyz answered ${res.status}`);
      },
      60_000,
      250,
    );
  } catch (err) {
    const logs = await container.logs();
    await container.stop();
    throw new Error(`the operator container did not become ready: ${(err as Error).message}\n${logs}`, {
      cause: err,
    });
  }
  return container;
}
