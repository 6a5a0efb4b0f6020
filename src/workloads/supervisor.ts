/**
 * The supervisor: the one process that owns a workload while it runs. It starts the proxy and
 * the container (none for a remote URL; an aggregate's path is supervise-aggregate.ts), records every status change, restarts a crashed
 * container with bounded exponential backoff, and on stop (abort signal: SIGTERM, Ctrl-C or
 * `moat stop`) closes the proxy and stops the container. Detached workloads run this in a
 * background `moat supervise <name>` process; `moat run -f` becomes such a process in place
 * (`moat supervise --foreground`, see run.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { clientTransport } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { remoteBackend } from '../proxy/backend.js';
import type { BackendSpec } from '../proxy/types.js';
import { httpTarget } from '../runtime/container-spec.js';
import type { ContainerRuntime, ContainerSpec } from '../runtime/types.js';
import { errorMessage, runtimeError } from '../util/errors.js';
import { log, setDebug } from '../util/log.js';
import { containerEnvironment } from './env.js';
import { isWorkloadContainer } from './lifecycle.js';
import { drivers, type RunningProxy } from './drivers.js';
import { watchRemote } from './remote-check.js';
import { superviseAggregate } from './supervise-aggregate.js';
import { running, untilAborted, type Recorder } from './supervise-shared.js';
import { processStartTime } from './process.js';
import type { StatusChange } from './status.js';
import type { WorkloadStore } from './store.js';
import type { StdioPipes } from '../mcp/stdio.js';

/** Restart policy for a container that exits on its own. */
export interface RestartPolicy {
  /** Restarts in a row before giving up (status `error`). */
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** A run at least this long resets the attempt counter. */
  stableRunMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  maxAttempts: 5,
  initialDelayMs: 1000,
  maxDelayMs: 30_000,
  stableRunMs: 60_000,
};

/** Delay before restart attempt `attempt` (1-based): initial, doubling, capped. */
export function restartDelay(policy: RestartPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
}

/** Set by `moat run`/`moat start` for the supervisor: the image they already prepared. */
export const IMAGE_PREPARED_ENV = 'MOAT_IMAGE_PREPARED';

export interface SuperviseOptions {
  store: WorkloadStore;
  name: string;
  /** Aborting stops the workload (proxy closed, container stopped). */
  signal: AbortSignal;
  /** Called once the proxy serves and the server runs. */
  onReady?: (url: string, metricsUrl?: string) => void;
  restartPolicy?: RestartPolicy;
}

export interface SuperviseResult {
  /** `stopped`: asked to stop; `exited`: gave up after the container kept exiting. */
  outcome: 'stopped' | 'exited';
  containerId?: string;
}

/** How long a started HTTP server may take to accept connections on its port. */
const BACKEND_READY_TIMEOUT_MS = 120_000;

/** Runs the workload until stopped. Failures are recorded as status `error` and rethrown. */
export async function superviseWorkload(options: SuperviseOptions): Promise<SuperviseResult> {
  const { store, name } = options;
  const owner = process.pid;
  const record = (change: StatusChange) => store.updateStatus(name, change, { owner });
  // Claim the workload: refused while another supervisor owns it (or the workload is gone), so a
  // second supervisor never replaces the first one's container.
  if (!(await record({ process_id: owner, process_start: processStartTime(owner) }))) {
    throw runtimeError(
      `workload "${name}" does not exist or another process supervises it; use "moat start ${name}" to restart it`,
    );
  }
  log().info({ workload: name, pid: owner }, 'supervisor started');
  try {
    const config = await store.readSavedRunConfig(name);
    if (!config) throw runtimeError(`workload "${name}" has no saved run configuration`);
    // `moat run --debug` is saved in the RunConfig; a detached supervisor has no other way to learn it.
    if (config.debug) setDebug(true);
    const result = config.aggregate
      ? await superviseAggregate({ ...config, aggregate: config.aggregate }, options, record)
      : config.remote_url
        ? await superviseRemote(config, options, record)
        : await superviseContainer(config, options, record);
    await record({ status: 'stopped', context: 'stopped on request', process_id: 0 });
    log().info({ workload: name }, 'workload stopped');
    return result;
  } catch (err) {
    log().error({ workload: name, err: errorMessage(err) }, 'workload failed');
    await record({ status: 'error', context: errorMessage(err), process_id: 0 });
    throw err;
  }
}

async function superviseRemote(
  config: RunConfig,
  options: SuperviseOptions,
  record: Recorder,
): Promise<SuperviseResult> {
  await record({ status: 'starting', context: `starting proxy to ${config.remote_url}` });
  const backend = remoteBackend(config);
  let loginNeeded = false;
  const proxy = await drivers.startProxy(config, backend, {
    // Say so in the status instead of retrying a login that needs a person.
    onAuthStatus: (auth) => {
      const change =
        auth.state === 'reauth_required'
          ? { status: 'unhealthy' as const, context: `remote authentication needed: ${auth.reason}` }
          : loginNeeded
            ? { status: 'running' as const, context: `proxying to ${config.remote_url} (logged in again)` }
            : undefined;
      loginNeeded = auth.state === 'reauth_required';
      if (change) void record(change).catch(() => {});
    },
  });
  try {
    const context = `proxying to ${config.remote_url}`;
    await record(running(proxy, context));
    log().info({ workload: config.name, url: proxy.endpoint, remote: config.remote_url }, 'workload running');
    options.onReady?.(proxy.endpoint, proxy.metricsUrl);
    await watchRemote(new URL('/health', proxy.endpoint).href, record, context, options.signal);
    await record({ status: 'stopping', context: 'stopping on request' });
  } finally {
    await proxy.close();
  }
  return { outcome: 'stopped' };
}

/** The running container the stdio backend attaches to; replaced on every restart. */
class CurrentContainer {
  private waiters: Array<{ resolve: (id: string) => void; reject: (err: Error) => void }> = [];
  private id: string | undefined;
  private closed = false;

  set(id: string | undefined): void {
    this.id = id;
    if (id === undefined) return;
    for (const waiter of this.waiters.splice(0)) waiter.resolve(id);
  }

  close(): void {
    this.closed = true;
    this.id = undefined;
    for (const waiter of this.waiters.splice(0)) waiter.reject(runtimeError('the workload is stopping'));
  }

  /** The current container, waiting for one when there is none (or only `notThis`, which has died). */
  next(notThis?: string): Promise<string> {
    if (this.closed) return Promise.reject(runtimeError('the workload is stopping'));
    if (this.id !== undefined && this.id !== notThis) return Promise.resolve(this.id);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }
}

/**
 * Attaches to the current container once it runs. The bridge re-attaches as soon as the pipes
 * end, usually before the supervisor has seen the exit; attaching to the dead container would
 * make Podman re-initialise it, so a container that no longer runs is skipped.
 */
async function attachRunning(
  runtime: ContainerRuntime,
  current: CurrentContainer,
  open: (id: string) => Promise<StdioPipes> = (id) => runtime.attachStdio(id),
): Promise<StdioPipes> {
  let dead: string | undefined;
  for (;;) {
    const id = await current.next(dead);
    if ((await runtime.inspectContainer(id))?.running) {
      try {
        return await open(id);
      } catch (err) {
        // It may have exited between the check and the attach: then wait for the restarted one.
        if ((await runtime.inspectContainer(id))?.running) throw err;
      }
    }
    dead = id;
  }
}

async function superviseContainer(
  config: RunConfig,
  options: SuperviseOptions,
  record: Recorder,
): Promise<SuperviseResult> {
  const { signal } = options;
  const policy = options.restartPolicy ?? DEFAULT_RESTART_POLICY;
  const containerName = config.container_name ?? config.name;
  await record({ status: 'starting', context: `preparing image ${config.image}` });
  const runtime = await drivers.connectRuntime();
  // `moat run`/`moat start` already pulled or found the image on the terminal; do not pull twice.
  const prepared =
    process.env[IMAGE_PREPARED_ENV] === config.image && (await runtime.findImage(config.image));
  if (!prepared) await runtime.ensureImage(config.image, { signal });
  await removeLeftoverContainer(runtime, containerName, config.name);
  const spec = drivers.containerSpec(config, await containerEnvironment(config));

  const current = new CurrentContainer();
  let proxy: RunningProxy | undefined;
  // A stdio proxy starts by attaching; if the first container dies meanwhile, the start waits for
  // the restarted one while this loop goes on restarting.
  let startingProxy: Promise<RunningProxy> | undefined;
  let proxyBackendUrl: string | undefined;
  let announced = false;
  let containerId: string | undefined;
  let attempt = 0;
  try {
    for (;;) {
      if (attempt === 0) await record({ status: 'starting', context: 'starting the container' });
      containerId = await runtime.createContainer(spec);
      await record({ container_id: containerId });
      await runtime.startContainer(containerId);
      // Waiting on a created (not yet started) container returns at once on Podman: wait after start.
      const exited = waitForExit(runtime, containerId);
      exited.catch(() => undefined); // observed below; avoid an unhandled rejection meanwhile
      const startedAt = Date.now();
      const backendUrl = await httpBackendUrl(runtime, containerId, config, spec);
      if (backendUrl) {
        if (attempt === 0)
          await record({
            context: `waiting for the server to listen on port ${new URL(backendUrl).port} (up to ${BACKEND_READY_TIMEOUT_MS / 1000} s)`,
          });
        await waitForHttp(backendUrl, exited, signal);
      }
      current.set(containerId);
      if (proxy && backendUrl !== proxyBackendUrl) {
        await proxy.close(); // the server moved (new container address): same port, new target
        proxy = undefined;
      }
      if (!proxy) {
        if (!startingProxy) {
          startingProxy = drivers.startProxy(config, backendFor(config, runtime, current, backendUrl));
          startingProxy.catch(() => undefined); // awaited below or on the next round
          proxyBackendUrl = backendUrl;
        }
        proxy = await Promise.race([startingProxy, exited.then(() => undefined)]);
        if (proxy) {
          startingProxy = undefined;
          if (!announced) options.onReady?.(proxy.endpoint, proxy.metricsUrl);
          announced = true;
        }
      }
      if (proxy) {
        const context = attempt === 0 ? 'server running' : `server running again after ${attempt} restart(s)`;
        await record({ ...running(proxy, context), restarts: attempt });
        log().info(
          { workload: config.name, url: proxy.endpoint, container: containerId },
          'workload running',
        );
      }

      const exitCode = await Promise.race([exited, untilAborted(signal).then(() => undefined)]);
      current.set(undefined);
      if (exitCode === undefined) break;
      attempt = Date.now() - startedAt >= policy.stableRunMs ? 1 : attempt + 1;
      log().warn({ workload: config.name, exitCode, attempt }, 'container exited');
      if (attempt > policy.maxAttempts) {
        throw runtimeError(
          `the container kept exiting (last exit code ${exitCode}); gave up after ${policy.maxAttempts} restarts. ` +
            `See "moat logs ${config.name}"`,
        );
      }
      const delay = restartDelay(policy, attempt);
      await record({
        status: 'restarting',
        context: `container exited with code ${exitCode}; restarting (attempt ${attempt} of ${policy.maxAttempts}) in ${delay / 1000}s`,
        restarts: attempt,
      });
      await runtime.removeContainer(containerId);
      await sleep(delay, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
    }
    await record({ status: 'stopping', context: 'stopping on request' });
  } finally {
    current.close();
    const closing = proxy ?? (await startingProxy?.catch(() => undefined));
    await closing
      ?.close()
      .catch((err: unknown) => log().warn({ err: errorMessage(err) }, 'closing the proxy failed'));
    if (containerId) await runtime.stopContainer(containerId).catch(() => undefined);
  }
  return { outcome: 'stopped', containerId };
}

/**
 * The exit code of a started container. Podman's wait sometimes answers -1 at once (it exited
 * before the wait began); the container's state then decides.
 */
async function waitForExit(runtime: ContainerRuntime, containerId: string): Promise<number> {
  for (;;) {
    const code = await runtime.waitContainer(containerId);
    if (code >= 0) return code;
    const info = await runtime.inspectContainer(containerId);
    // Started already, so anything but running means it has exited.
    if (!info || !info.running) return info?.exitCode ?? code;
    await sleep(200);
  }
}

/** A container left behind by a killed supervisor or a stopped run is replaced; a stranger's is not. */
async function removeLeftoverContainer(
  runtime: ContainerRuntime,
  containerName: string,
  name: string,
): Promise<void> {
  const existing = await runtime.inspectContainer(containerName);
  if (!existing) return;
  if (!isWorkloadContainer(existing, name)) {
    throw runtimeError(
      `a container named "${containerName}" exists and was not created by moat for workload "${name}"; ` +
        'remove or rename it, or run the workload under another --name',
    );
  }
  await runtime.removeContainer(existing.id);
}

function backendFor(
  config: RunConfig,
  runtime: ContainerRuntime,
  current: CurrentContainer,
  httpUrl: string | undefined,
): BackendSpec {
  if (httpUrl) {
    return {
      kind: 'http',
      url: httpUrl,
      transport: clientTransport(config),
      remote: false,
    };
  }
  return {
    kind: 'stdio',
    connect: () => attachRunning(runtime, current),
    // Another process of the server: the container's own command, exec'd in the running container
    // (a dual-era server's 2026-07-28 process, src/proxy/stdio/era-process.ts). It stops with it.
    startProcess: () => attachRunning(runtime, current, (id) => runtime.execStdio(id)),
  };
}

/**
 * Where the proxy reaches an SSE or streamable-HTTP server (published loopback port, on the
 * egress proxy for an isolated workload, or the target port with host networking). A published host port
 * is pinned in the spec after the first start, so restarts keep the same backend URL.
 */
async function httpBackendUrl(
  runtime: ContainerRuntime,
  containerId: string,
  config: RunConfig,
  spec: ContainerSpec,
): Promise<string | undefined> {
  if (config.transport === 'stdio') return undefined;
  const targetPort = config.target_port;
  if (!targetPort)
    throw runtimeError(`the run configuration has no target_port for a ${config.transport} server`);
  for (let tries = 0; tries < 50; tries++) {
    const info = await runtime.inspectContainer(containerId);
    if (!info) throw runtimeError('the container disappeared right after it started');
    const target = httpTarget(spec, info, targetPort, config.target_host);
    if (target) {
      const published = info.ports.find((p) => p.containerPort === targetPort);
      const binding = spec.ports.find((p) => p.containerPort === targetPort);
      if (published && binding) binding.hostPort = published.hostPort;
      return `http://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
    }
    await sleep(200);
  }
  throw runtimeError(
    `the container's port ${targetPort} is not reachable from the host (no published port or address)`,
  );
}

/**
 * Waits until the server answers HTTP (any status); fails if the container exits first. A TCP
 * connect is not enough: rootless port forwarders accept before the server listens.
 */
async function waitForHttp(url: string, exited: Promise<number>, signal: AbortSignal): Promise<void> {
  let exitCode: number | undefined;
  void exited.then((code) => (exitCode = code)).catch(() => undefined);
  const deadline = Date.now() + BACKEND_READY_TIMEOUT_MS;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    if (await answersHttp(url)) return;
    if (exitCode !== undefined) throw exitedBeforeListening(exitCode, url);
    if (signal.aborted) return;
    if (Date.now() > deadline) throw runtimeError(`the server did not answer HTTP on ${url}`);
    await sleep(delay);
  }
}

/**
 * A container that ends before its HTTP server listens is most often a stdio server run with an
 * HTTP transport: it reads JSON-RPC on stdin, finds none attached, and exits cleanly.
 */
function exitedBeforeListening(exitCode: number, url: string): Error {
  const port = new URL(url).port;
  return runtimeError(
    exitCode === 0
      ? `the server exited with code 0 before it listened on port ${port}: it looks like a stdio server ` +
          '(one that reads JSON-RPC on stdin and exits when stdin closes); run it with --transport stdio'
      : `the server exited with code ${exitCode} before it listened on port ${port}; see "moat logs" for its ` +
          'output (a stdio server needs --transport stdio)',
  );
}

async function answersHttp(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
