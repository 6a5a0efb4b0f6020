/**
 * Runs what the operator wrote to the API server for an MCPRemoteProxy (its Deployment, the
 * RunConfig ConfigMap and the Secrets the pod reads) as real pods with `podman kube play`, because
 * no kubelet runs here. Each replica is played as its own Pod, with these changes, each one
 * forced by Podman 4.3 or by having no cluster network (../shared/reference/kubernetes-test-cluster.md):
 *
 * - Secrets resolved into the pod: `secretKeyRef` env becomes a literal value, and every
 *   ConfigMap and Secret volume becomes a host directory holding its keys (kube play cannot read
 *   Secrets, and cannot create the mount point of a volume nested in a read-only one). A Secret
 *   or key the pod needs that does not exist leaves the pod unplayed, as a kubelet keeps it in
 *   ContainerCreating: `playProxyPods` rejects with `PodNotStartedError`.
 * - Host networking, so the pod reaches the host's loopback services (remote MCP server, OIDC
 *   provider, Redis) and the host reaches the pod. Replicas then share the host's ports, so each
 *   replica's copy of the RunConfig gets its own loopback port (`host: 127.0.0.1` keeps it off
 *   the other interfaces), and `ports` are dropped (kube play refuses port mappings on the host
 *   network).
 * - `hostAliases` written as the pod's /etc/hosts (kube play ignores them on the host network).
 * - Probes dropped: kube play turns them into `curl` health checks, which the shell-less image
 *   cannot run (and no systemd runs them here). `waitForHealth` polls the readiness probe's path.
 *
 * The image is the one the operator put in the Deployment (its `--proxy-image`, the proxy image
 * test/support/moat-image.ts builds locally in these tests).
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type {
  V1ConfigMap,
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1PodSpec,
  V1Secret,
  V1Volume,
} from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { objectPath } from '../../src/operator/controller/resource.js';
import { proxyObjectNames } from '../../src/operator/reconcile/index.js';
import { RUNCONFIG_KEY } from '../../src/operator/reconcile/mounts.js';
import { CONFIG_MAPS, DEPLOYMENTS, SECRETS } from '../../src/operator/reconcilers/kinds.js';
import { adminClient, eventually } from './kube-controller.js';
import { podmanEnv } from './podman.js';

const run = promisify(execFile);
const PODMAN_TIMEOUT_MS = 120_000;

/** What the operator wrote for one proxy, read back from the API server. */
export interface OperatorOutput {
  deployment: V1Deployment;
  configMap: V1ConfigMap;
  /** Every Secret the pod names, by name; undefined when it does not exist. */
  secrets: Record<string, V1Secret | undefined>;
}

/** A Secret or key the pod needs is missing: a kubelet would not start the container either. */
export class PodNotStartedError extends Error {}

export interface ProxyPod {
  /** Podman's pod name. */
  name: string;
  /** `http://127.0.0.1:<port>`, the pod's proxy on the host network. */
  url: string;
  /** `podman kube down` of this pod (the pod removed, as when a node loses it). */
  remove(): Promise<void>;
  /** The proxy container's output (JSON log lines). */
  logs(): Promise<string>;
}

export interface PlayedProxy {
  pods: ProxyPod[];
  /** Removes every pod played here; safe to call twice. */
  down(): Promise<void>;
}

const isMissing = (err: unknown) => (err as { status?: number }).status === 404;

/** Waits (bounded) until the operator has written the proxy's Deployment and ConfigMap, then reads them and their Secrets. */
export async function readOperatorOutput(
  namespace: string,
  proxyName: string,
  timeoutMs = 30_000,
): Promise<OperatorOutput> {
  const admin = adminClient();
  const names = proxyObjectNames(proxyName);
  const deployment = await eventually(
    () => admin.get(objectPath(DEPLOYMENTS, namespace, names.deployment)) as Promise<V1Deployment>,
    timeoutMs,
    200,
  );
  const configMap = (await admin.get(objectPath(CONFIG_MAPS, namespace, names.configMap))) as V1ConfigMap;
  const secrets: OperatorOutput['secrets'] = {};
  for (const name of secretNames(podSpecOf(deployment))) {
    secrets[name] = await (admin.get(objectPath(SECRETS, namespace, name)) as Promise<V1Secret>).catch(
      (err: unknown) => {
        if (isMissing(err)) return undefined;
        throw err;
      },
    );
  }
  return { deployment, configMap, secrets };
}

function podSpecOf(deployment: V1Deployment): V1PodSpec {
  const spec = deployment.spec?.template.spec;
  if (!spec) throw new Error(`Deployment ${deployment.metadata?.name ?? ''} has no pod template`);
  return spec;
}

function secretNames(spec: V1PodSpec): string[] {
  const names = new Set<string>();
  for (const container of spec.containers)
    for (const env of container.env ?? []) {
      const ref = env.valueFrom?.secretKeyRef;
      if (ref?.name) names.add(ref.name);
    }
  for (const volume of spec.volumes ?? []) if (volume.secret?.secretName) names.add(volume.secret.secretName);
  return [...names];
}

/** The value of one Secret key, or PodNotStartedError naming what is missing. */
function secretValue(output: OperatorOutput, name: string, key: string): Buffer {
  const secret = output.secrets[name];
  if (!secret) throw new PodNotStartedError(`Secret ${name} does not exist, so the pod cannot start`);
  const data = secret.data?.[key];
  if (data === undefined)
    throw new PodNotStartedError(`Secret ${name} has no key ${key}, so the pod cannot start`);
  return Buffer.from(data, 'base64');
}

function literalEnv(output: OperatorOutput, env: V1EnvVar[]): V1EnvVar[] {
  return env.map((variable) => {
    const ref = variable.valueFrom?.secretKeyRef;
    if (!ref) return variable;
    return { name: variable.name, value: secretValue(output, ref.name ?? '', ref.key).toString('utf8') };
  });
}

/** The files of a ConfigMap or Secret volume (its `items`, else every key), by path in the volume. */
function volumeFiles(output: OperatorOutput, volume: V1Volume, runConfig: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const { configMap, secret } = volume;
  if (configMap) {
    if (configMap.name !== output.configMap.metadata?.name) {
      throw new Error(
        `volume ${volume.name}: only the proxy's own ConfigMap can be played here, not ${configMap.name ?? ''}`,
      );
    }
    const data: Record<string, string> = { ...output.configMap.data, [RUNCONFIG_KEY]: runConfig };
    for (const item of configMap.items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
      const value = data[item.key];
      if (value === undefined) throw new Error(`ConfigMap ${configMap.name} has no key ${item.key}`);
      files.set(item.path, Buffer.from(value));
    }
  }
  if (secret?.secretName) {
    const name = secret.secretName;
    const keys = Object.keys(output.secrets[name]?.data ?? {});
    for (const item of secret.items ?? keys.map((key) => ({ key, path: key }))) {
      files.set(item.path, secretValue(output, name, item.key));
    }
  }
  return files;
}

/**
 * Every ConfigMap and Secret volume as a host directory holding its projected files (kube play
 * cannot read Secrets), with the mount points of mounts nested inside it created, as a kubelet
 * does (the image's root filesystem is read-only, so runc cannot create them).
 */
function hostVolumes(output: OperatorOutput, spec: V1PodSpec, podDir: string, runConfig: string): V1Volume[] {
  const mounts = spec.containers.flatMap((c) => c.volumeMounts ?? []);
  return (spec.volumes ?? []).map((volume) => {
    if (!volume.configMap && !volume.secret) return volume;
    const dir = join(podDir, `volume-${volume.name}`);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    for (const [path, content] of volumeFiles(output, volume, runConfig)) {
      writeFileSync(join(dir, path), content, { mode: 0o444 });
    }
    for (const outer of mounts.filter((m) => m.name === volume.name))
      for (const inner of mounts)
        if (inner.mountPath.startsWith(`${outer.mountPath}/`)) {
          mkdirSync(join(dir, inner.mountPath.slice(outer.mountPath.length + 1)), {
            recursive: true,
            mode: 0o755,
          });
        }
    return { name: volume.name, hostPath: { path: dir, type: 'Directory' } };
  });
}

function hostsFile(spec: V1PodSpec, podDir: string): string {
  const lines = [
    '127.0.0.1 localhost',
    ...(spec.hostAliases ?? []).map((a) => `${a.ip} ${(a.hostnames ?? []).join(' ')}`),
  ];
  const path = join(podDir, 'hosts');
  writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o444 });
  return path;
}

function playedContainer(container: V1Container, output: OperatorOutput): V1Container {
  const { ports: _ports, startupProbe: _s, readinessProbe: _r, livenessProbe: _l, ...rest } = container;
  return {
    ...rest,
    env: literalEnv(output, container.env ?? []),
    volumeMounts: [
      ...(container.volumeMounts ?? []),
      { name: 'hosts', mountPath: '/etc/hosts', readOnly: true },
    ],
  };
}

/** The Pod document of one replica on host port `port`. */
function replicaYaml(
  output: OperatorOutput,
  options: { podName: string; port: number; podDir: string },
): string {
  const spec = podSpecOf(output.deployment);
  const runConfig = JSON.parse(output.configMap.data?.[RUNCONFIG_KEY] ?? 'null') as Record<
    string,
    unknown
  > | null;
  if (!runConfig)
    throw new Error(`ConfigMap ${output.configMap.metadata?.name ?? ''} has no ${RUNCONFIG_KEY}`);
  const volumes = hostVolumes(
    output,
    spec,
    options.podDir,
    JSON.stringify({ ...runConfig, host: '127.0.0.1', port: options.port }),
  );
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: options.podName, labels: output.deployment.spec?.template.metadata?.labels },
    spec: {
      ...spec,
      hostNetwork: true,
      hostAliases: undefined,
      containers: spec.containers.map((c) => playedContainer(c, output)),
      volumes: [
        ...volumes,
        { name: 'hosts', hostPath: { path: hostsFile(spec, options.podDir), type: 'File' } },
      ],
    },
  };
  return stringify(pod);
}

/** A podman CLI call with the tests' Podman settings, bounded in time. */
export async function podman(args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, {
    env: podmanEnv(),
    timeout: PODMAN_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/**
 * Plays one Pod per replica of the operator's Deployment, replica `i` on `127.0.0.1:ports[i]`.
 * `workDir` holds the YAML and the resolved Secret files (made readable to the pod's UID). Does
 * not wait for health (see waitForHealth).
 */
export async function playProxyPods(
  output: OperatorOutput,
  options: { ports: number[]; workDir: string },
): Promise<PlayedProxy> {
  const replicas = output.deployment.spec?.replicas ?? 1;
  if (options.ports.length !== replicas) {
    throw new Error(`the Deployment has ${replicas} replicas but ${options.ports.length} ports were given`);
  }
  const base = `${output.deployment.metadata?.namespace ?? ''}-${output.deployment.metadata?.name ?? ''}`;
  const files = options.ports.map((port, index) => {
    const podName = `${base}-${index}`;
    const podDir = join(options.workDir, podName);
    mkdirSync(podDir, { recursive: true });
    chmodSync(options.workDir, 0o755);
    chmodSync(podDir, 0o755);
    const file = join(podDir, 'pod.yaml');
    writeFileSync(file, replicaYaml(output, { podName, port, podDir }));
    return { podName, port, file };
  });
  const removed = new Set<string>();
  const remove = async (podName: string, file: string) => {
    if (removed.has(podName)) return;
    removed.add(podName);
    await podman(['kube', 'down', file]).catch(() => undefined);
    // A failed play can leave the pod behind under its name.
    await podman(['pod', 'rm', '--force', '--ignore', podName]).catch(() => undefined);
  };
  const played: PlayedProxy = {
    pods: files.map(({ podName, port, file }) => ({
      name: podName,
      url: `http://127.0.0.1:${port}`,
      remove: () => remove(podName, file),
      logs: () => containerLogs(`${podName}-moat`),
    })),
    down: async () => {
      await Promise.all(files.map(({ podName, file }) => remove(podName, file)));
    },
  };
  try {
    for (const { podName, file } of files) {
      await podman(['pod', 'rm', '--force', '--ignore', podName]).catch(() => undefined);
      await podman(['kube', 'play', '--no-hosts', file]);
    }
  } catch (err) {
    await played.down();
    throw err;
  }
  return played;
}

/** A container's output (stdout and stderr), or why there is none: for failure messages. */
export function containerLogs(name: string): Promise<string> {
  return run('podman', ['logs', name], { env: podmanEnv(), timeout: 30_000 }).then(
    ({ stdout, stderr }) => stdout + stderr,
    (err: Error) => `(no logs: ${err.message})`,
  );
}

/** Status of `GET /health` (0 when nothing answers). */
export async function healthStatus(pod: ProxyPod): Promise<number> {
  try {
    const res = await fetch(`${pod.url}/health`, { signal: AbortSignal.timeout(3_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Polls `/health` (the readiness probe's path) until 200; on timeout fails with the pod's logs. */
export async function waitForHealth(pod: ProxyPod, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let status = 0;
  while (Date.now() < deadline) {
    status = await healthStatus(pod);
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `pod ${pod.name} not healthy after ${timeoutMs} ms (last /health: ${status}):\n${await pod.logs()}`,
  );
}
