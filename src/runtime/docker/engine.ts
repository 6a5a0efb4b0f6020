/**
 * ContainerRuntime over the Docker Engine API (api.ts), for Docker and Podman alike.
 * Podman differences handled here: attach must carry an EMPTY body (Podman feeds a request body
 * into the container's stdin), and pull errors arrive inside a 200 stream.
 */
import { existsSync } from 'node:fs';
import { Writable, type Duplex, type Readable } from 'node:stream';
import { errorMessage, notImplemented, runtimeError, usageError } from '../../util/errors.js';
import { ensureEgressImage } from '../egress/image.js';
import {
  egressContainerBody,
  gatewayAddresses,
  relayContainerBody,
  sandboxNames,
  sandboxProxyEnv,
  sandboxVolumeBody,
  type SandboxNames,
} from '../egress/sandbox.js';
import { isFloatingImageRef } from '../image-ref.js';
import {
  LABELS,
  type AttachedStdio,
  type BuildImageOptions,
  type ContainerInfo,
  type ContainerRuntime,
  type ContainerSpec,
  type ContainerState,
  type EnsureImageOptions,
  type EnsuredImage,
  type LogsOptions,
  type PublishedPort,
  type RuntimeInfo,
  type SandboxSpec,
} from '../types.js';
import { EngineApiError, segment, type EngineApi } from './api.js';
import { BuildStreamReader } from './build-stream.js';
import { demux, demuxMerged } from './demux.js';

const STATES: readonly ContainerState[] = [
  'created',
  'running',
  'paused',
  'restarting',
  'removing',
  'exited',
  'dead',
];

/** Network modes every engine knows; anything else (without `:`) names a network. */
const BUILTIN_NETWORK_MODES = new Set(['bridge', 'host', 'none', 'default']);

/** HTTP status of an engine error answer, if it was one. */
function statusOf(err: unknown): number | undefined {
  return err instanceof EngineApiError ? err.statusCode : undefined;
}

/**
 * The object is gone: 404, or Podman's 500 for a container removed while we asked about it
 * ("does not exist in database: no such container").
 */
function isGone(err: unknown): boolean {
  return statusOf(err) === 404 || /no such container|does not exist in database/.test(engineMessage(err));
}

/** The engine's own message (an EngineApiError carries it as is), or the connection failure. */
function engineMessage(err: unknown): string {
  return errorMessage(err).trim();
}

export class EngineRuntime implements ContainerRuntime {
  constructor(
    private readonly api: EngineApi,
    readonly info: RuntimeInfo,
  ) {}

  // ---------------------------------------------------------------------------------------------
  // Images

  async findImage(image: string): Promise<string | undefined> {
    try {
      const inspected = await this.api.json<{ Id: string }>('GET', `/images/${segment(image)}/json`);
      return inspected.Id;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw runtimeError(`cannot inspect image ${image}: ${engineMessage(err)}`, { cause: err });
    }
  }

  async ensureImage(image: string, options: EnsureImageOptions = {}): Promise<EnsuredImage> {
    const report = options.onProgress ?? (() => undefined);
    report({ phase: 'check', image, message: `Checking image ${image}` });
    if (!isFloatingImageRef(image)) {
      const local = await this.findImage(image);
      if (local) {
        report({ phase: 'done', image, message: `Using local image ${image}` });
        return { id: local, source: 'local' };
      }
    }
    let pullError: unknown;
    try {
      await this.pull(image, options);
    } catch (err) {
      if (options.signal?.aborted) throw runtimeError(`pulling ${image} was cancelled`, { cause: err });
      pullError = err;
    }
    const id = await this.findImage(image);
    if (id && pullError === undefined) {
      report({ phase: 'done', image, message: `Pulled ${image}` });
      return { id, source: 'pulled' };
    }
    if (id) {
      report({
        phase: 'done',
        image,
        message: `Could not pull ${image} (${errorMessage(pullError)}); using the local copy`,
      });
      return { id, source: 'local' };
    }
    throw runtimeError(
      `image ${image} was not found locally and could not be pulled: ${errorMessage(pullError)}. ` +
        'Check the image name and tag, and that the registry is reachable (or load the image locally).',
      { cause: pullError },
    );
  }

  private async pull(image: string, options: EnsureImageOptions): Promise<void> {
    const report = options.onProgress ?? (() => undefined);
    report({ phase: 'pull', image, message: `Pulling ${image}...` });
    let stream: Readable;
    try {
      stream = await this.api.stream('POST', '/images/create', {
        query: pullQuery(image),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      throw new Error(engineMessage(err), { cause: err });
    }
    // Progress is newline-delimited JSON; Podman reports failures inside a 200 stream.
    let buffered = '';
    let failure: string | undefined;
    for await (const chunk of stream) {
      buffered += String(chunk);
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line) continue;
        let event: { status?: string; progress?: string; id?: string; error?: string };
        try {
          event = JSON.parse(line) as typeof event;
        } catch {
          continue;
        }
        if (event.error) failure = event.error;
        else if (event.status) {
          const parts = [event.id, event.status, event.progress].filter(Boolean);
          report({ phase: 'pull', image, message: parts.join(' ') });
        }
      }
    }
    if (failure) throw new Error(failure.trim());
  }

  async buildImage(options: BuildImageOptions): Promise<void> {
    const reader = new BuildStreamReader(options.tag, options.onProgress ?? (() => undefined));
    try {
      const stream = await this.api.stream('POST', '/build', {
        query: {
          t: options.tag,
          dockerfile: options.containerfile,
          buildargs: options.buildArgs ?? {},
          labels: options.labels ?? {},
          rm: true,
          forcerm: true,
          // Podman: commit only the final image. Otherwise every build leaves its builder stage
          // (node_modules, Go caches: hundreds of MB) behind as untagged layers. Docker ignores it.
          layers: false,
        },
        body: options.context,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      for await (const chunk of stream) reader.push(String(chunk));
      reader.end();
    } catch (err) {
      if (options.signal?.aborted)
        throw runtimeError(`building ${options.tag} was cancelled`, { cause: err });
      reader.end();
      reader.failure ??= engineMessage(err);
      throw runtimeError(reader.failureMessage(), { cause: err });
    }
    // Podman reports a failed step inside a 200 answer; make sure the image is really there.
    if (reader.failure !== undefined || !(await this.findImage(options.tag)))
      throw runtimeError(reader.failureMessage());
  }

  // ---------------------------------------------------------------------------------------------
  // Containers

  /** Names a missing mount source or network before the engine's terser errors. */
  private async checkReferences(spec: ContainerSpec): Promise<void> {
    // Only a local engine shares our filesystem.
    if (this.info.endpoint.startsWith('unix://'))
      for (const mount of spec.mounts)
        if (!existsSync(mount.source))
          throw usageError(`volume source path does not exist: ${mount.source} (mounted at ${mount.target})`);
    const named = !BUILTIN_NETWORK_MODES.has(spec.networkMode) && !spec.networkMode.includes(':');
    if (named && !(await this.networkExists(spec.networkMode)))
      throw usageError(
        `network ${spec.networkMode} does not exist; create it (e.g. \`podman network create ${spec.networkMode}\`) ` +
          'or choose another --network (bridge, host, none or an existing network)',
      );
  }

  /**
   * Empty read-only tmpfs mounts hiding directories (ignore files). Podman copies the covered
   * directory's files into a tmpfs unless told not to, which would show exactly what is hidden.
   */
  private tmpfsOverlays(targets: readonly string[]): Record<string, string> {
    const options = `ro,size=4k,mode=0555${this.info.flavor === 'podman' ? ',notmpcopyup' : ''}`;
    return Object.fromEntries(targets.map((target) => [target, options]));
  }

  async createContainer(spec: ContainerSpec): Promise<string> {
    await this.checkReferences(spec);
    const labels = { ...spec.labels };
    const env = { ...spec.env };
    if (spec.sandbox) {
      const names = await this.startSandbox({ ...spec, sandbox: spec.sandbox });
      Object.assign(labels, {
        [LABELS.egress]: names.egress,
        [LABELS.relay]: names.relay,
        [LABELS.sandboxVolume]: names.volume,
      });
      Object.assign(env, sandboxProxyEnv(spec.sandbox));
    }
    const exposed: Record<string, object> = {};
    const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
    // A sandboxed workload has no network of its own: its ports are published on the egress proxy.
    for (const port of spec.sandbox ? [] : spec.ports) {
      const key = `${port.containerPort}/tcp`;
      exposed[key] = {};
      (bindings[key] ??= []).push({
        HostIp: port.hostIp,
        HostPort: port.hostPort === 0 ? '' : String(port.hostPort),
      });
    }
    try {
      return await this.create(spec.name, {
        Image: spec.image,
        Cmd: spec.cmd,
        ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}),
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
        Labels: labels,
        ExposedPorts: exposed,
        Tty: false,
        OpenStdin: spec.attachStdio,
        StdinOnce: false,
        AttachStdin: spec.attachStdio,
        AttachStdout: spec.attachStdio,
        AttachStderr: spec.attachStdio,
        HostConfig: {
          Mounts: spec.mounts.map((m) => ({
            Type: 'bind' as const,
            Source: m.source,
            Target: m.target,
            ReadOnly: m.readOnly,
          })),
          ...(spec.tmpfs?.length ? { Tmpfs: this.tmpfsOverlays(spec.tmpfs) } : {}),
          PortBindings: bindings,
          NetworkMode: spec.networkMode,
          Privileged: spec.privileged,
          CapDrop: spec.capDrop,
          SecurityOpt: spec.securityOpt,
          // The supervisor restarts workloads; the runtime must not race it.
          RestartPolicy: { Name: 'no' },
        },
      });
    } catch (err) {
      // Best effort: the create failure is what the user must see.
      if (spec.sandbox) await this.removeSandbox(labels).catch(() => undefined);
      // Docker answers 409 for a taken name; Podman 500 with "name is already in use".
      if (statusOf(err) === 409 || /already in use/.test(engineMessage(err)))
        throw runtimeError(
          `a container named ${spec.name} already exists; remove it first or choose another --name`,
          { cause: err },
        );
      if (statusOf(err) === 404 && /image/i.test(engineMessage(err)))
        throw runtimeError(
          `cannot create container ${spec.name}: image ${spec.image} is not available locally (ensureImage first)`,
          { cause: err },
        );
      throw runtimeError(`cannot create container ${spec.name}: ${engineMessage(err)}`, { cause: err });
    }
  }

  /**
   * The workload's sandbox (egress/sandbox.ts): the socket volume, the egress proxy with the
   * engine's gateways snapshotted now, and the relay whose network namespace the workload joins.
   * Both are started at once (the workload's namespace must exist when it starts).
   */
  private async startSandbox(spec: ContainerSpec & { sandbox: SandboxSpec }): Promise<SandboxNames> {
    const names = sandboxNames(spec.name);
    // The proxy image is built from this host's Node binary, so the engine must run on this host.
    if (!this.info.endpoint.startsWith('unix://'))
      throw notImplemented(
        `network isolation with a remote container engine (${this.info.endpoint}); ` +
          'use --isolate-network=false with a profile that allows the network',
      );
    const image = await ensureEgressImage(this.api);
    // Parts left behind by this workload (its container was removed outside moat) are replaced.
    for (const leftover of [names.relay, names.egress]) {
      const info = await this.inspectContainer(leftover);
      if (info?.labels[LABELS.egressFor] === spec.name) await this.removeQuietly(info.id);
    }
    const created: string[] = [];
    try {
      // A volume left behind is reused: it only ever holds sockets, which are recreated.
      if (!(await this.volumeExists(names.volume)))
        await this.api.json('POST', '/volumes/create', { body: sandboxVolumeBody(names, spec.name) });
      const gateways = await gatewayAddresses(this.api);
      created.push(await this.create(names.egress, egressContainerBody(spec, image, gateways)));
      created.push(await this.create(names.relay, relayContainerBody(spec, image)));
      for (const id of created) await this.startOne(id);
      return names;
    } catch (err) {
      for (const id of created.reverse()) await this.removeQuietly(id);
      await this.removeVolume(names.volume);
      if (statusOf(err) === 409 || /already in use/.test(engineMessage(err)))
        throw runtimeError(
          `a container named ${names.egress} or ${names.relay} already exists; remove it first`,
          { cause: err },
        );
      throw runtimeError(`cannot start the network sandbox of ${spec.name}: ${engineMessage(err)}`, {
        cause: err,
      });
    }
  }

  /** Removes a workload's sandbox containers and volume (named by its labels); gone is fine. */
  private async removeSandbox(labels: Record<string, string>): Promise<void> {
    for (const key of [LABELS.relay, LABELS.egress]) {
      const name = labels[key];
      if (name) await this.forceRemove(name, name);
    }
    const volume = labels[LABELS.sandboxVolume];
    if (volume) await this.removeVolume(volume);
  }

  private async volumeExists(name: string): Promise<boolean> {
    try {
      await this.api.json('GET', `/volumes/${segment(name)}`);
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }

  private async removeVolume(name: string): Promise<void> {
    try {
      await this.api.json('DELETE', `/volumes/${segment(name)}`);
    } catch (err) {
      if (statusOf(err) !== 404)
        throw runtimeError(`cannot remove volume ${name}: ${engineMessage(err)}`, { cause: err });
    }
  }

  private async removeQuietly(idOrName: string): Promise<void> {
    await this.api
      .json('DELETE', containerPath(idOrName), { query: { force: true, v: true } })
      .catch(() => undefined);
  }

  /** Creates a container from an Engine API body; returns its ID. */
  private async create(name: string, body: object): Promise<string> {
    const created = await this.api.json<{ Id: string }>('POST', '/containers/create', {
      query: { name },
      body,
    });
    return created.Id;
  }

  /** A workload's sandbox containers in start order (egress, relay); none when not isolated. */
  private async sandboxOf(idOrName: string): Promise<string[]> {
    const labels = (await this.inspectContainer(idOrName))?.labels ?? {};
    return [labels[LABELS.egress], labels[LABELS.relay]].filter((n): n is string => n !== undefined);
  }

  async startContainer(idOrName: string): Promise<void> {
    for (const part of await this.sandboxOf(idOrName)) await this.startOne(part);
    await this.startOne(idOrName);
  }

  private async startOne(idOrName: string): Promise<void> {
    try {
      await this.api.json('POST', containerPath(idOrName, '/start'));
    } catch (err) {
      if (statusOf(err) === 304) return; // already running
      const message = engineMessage(err);
      throw runtimeError(`cannot start container ${idOrName}: ${message}${startFailureHint(message)}`, {
        cause: err,
      });
    }
  }

  async stopContainer(idOrName: string, timeoutSeconds = 10): Promise<void> {
    const sandbox = await this.sandboxOf(idOrName);
    await this.stopOne(idOrName, timeoutSeconds);
    for (const part of sandbox.reverse()) await this.stopOne(part, timeoutSeconds);
  }

  private async stopOne(idOrName: string, timeoutSeconds: number): Promise<void> {
    try {
      await this.api.json('POST', containerPath(idOrName, '/stop'), { query: { t: timeoutSeconds } });
    } catch (err) {
      const status = statusOf(err);
      if (status === 304 || isGone(err)) return;
      throw runtimeError(`cannot stop container ${idOrName}: ${engineMessage(err)}`, { cause: err });
    }
  }

  async removeContainer(idOrName: string): Promise<void> {
    const info = await this.inspectContainer(idOrName);
    if (!info) return;
    await this.forceRemove(info.id, idOrName);
    await this.removeSandbox(info.labels);
  }

  /** Force-removes a container; gone already is fine. */
  private async forceRemove(id: string, label: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.api.json('DELETE', containerPath(id), { query: { force: true, v: true } });
        return;
      } catch (err) {
        if (isGone(err)) return;
        // Podman refuses while the container is between states (e.g. exiting after its stdin closed).
        if (attempt < 10 && /state improper|could not be stopped/.test(engineMessage(err))) {
          await new Promise((resolve) => setTimeout(resolve, 300));
          continue;
        }
        throw runtimeError(`cannot remove container ${label}: ${engineMessage(err)}`, { cause: err });
      }
    }
  }

  /** The engine's own inspect answer; undefined when the container is gone. */
  async #inspectRaw(idOrName: string): Promise<ContainerInspect | undefined> {
    try {
      return await this.api.json<ContainerInspect>('GET', containerPath(idOrName, '/json'));
    } catch (err) {
      if (isGone(err)) return undefined;
      throw runtimeError(`cannot inspect container ${idOrName}: ${engineMessage(err)}`, { cause: err });
    }
  }

  async inspectContainer(idOrName: string): Promise<ContainerInfo | undefined> {
    const raw = await this.#inspectRaw(idOrName);
    if (!raw) return undefined;
    const info = toContainerInfo(raw);
    // A sandboxed workload is reachable at the ports published on its egress proxy.
    const egress = info.labels[LABELS.egress];
    if (egress) info.ports = (await this.inspectContainer(egress))?.ports ?? [];
    return info;
  }

  async listContainers(
    labels: Record<string, string> = { [LABELS.managed]: 'true' },
  ): Promise<ContainerInfo[]> {
    let list: Array<{ Id: string }>;
    try {
      list = await this.api.json<Array<{ Id: string }>>('GET', '/containers/json', {
        query: { all: true, filters: { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`) } },
      });
    } catch (err) {
      throw runtimeError(`cannot list containers: ${engineMessage(err)}`, { cause: err });
    }
    const infos = await Promise.all(list.map((c) => this.inspectContainer(c.Id)));
    // A container removed between list and inspect is simply gone.
    return infos.filter((i): i is ContainerInfo => i !== undefined);
  }

  async waitContainer(idOrName: string): Promise<number> {
    for (;;) {
      let code: number | undefined;
      try {
        code = (await this.api.json<{ StatusCode?: number }>('POST', containerPath(idOrName, '/wait')))
          .StatusCode;
      } catch (err) {
        if (isGone(err)) throw runtimeError(`no container named ${idOrName}`, { cause: err });
        throw runtimeError(`cannot wait for container ${idOrName}: ${engineMessage(err)}`, { cause: err });
      }
      if (code !== undefined && code >= 0) return code;
      // Podman sometimes answers -1 at once (the container exited before the wait began, or has
      // not started yet): the container's state decides.
      const info = await this.inspectContainer(idOrName);
      if (!info) throw runtimeError(`no container named ${idOrName}`);
      if (!info.running && info.state !== 'created') return info.exitCode;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async logs(idOrName: string, options: LogsOptions = {}): Promise<Readable> {
    const query: Record<string, string | number | boolean> = {
      follow: options.follow ?? false,
      stdout: options.stdout ?? true,
      stderr: options.stderr ?? true,
    };
    if (options.tail !== undefined) query.tail = options.tail;
    const stream = await this.api
      .stream('GET', containerPath(idOrName, '/logs'), { query })
      .catch((err: unknown) => {
        if (isGone(err)) throw runtimeError(`no container named ${idOrName}`, { cause: err });
        throw runtimeError(`cannot read logs of ${idOrName}: ${engineMessage(err)}`, { cause: err });
      });
    return demuxMerged(stream);
  }

  async attachStdio(idOrName: string): Promise<AttachedStdio> {
    // hijack() sends no body, so nothing can leak into the server's stdin on Podman.
    const socket = await this.api
      .hijack(containerPath(idOrName, '/attach'), { stream: true, stdin: true, stdout: true, stderr: true })
      .catch((err: unknown) => {
        if (isGone(err)) throw runtimeError(`no container named ${idOrName}`, { cause: err });
        throw runtimeError(`cannot attach to ${idOrName}: ${engineMessage(err)}`, { cause: err });
      });
    return stdioOf(socket);
  }

  async execStdio(idOrName: string): Promise<AttachedStdio> {
    const raw = await this.#inspectRaw(idOrName);
    if (!raw) throw runtimeError(`no container named ${idOrName}`);
    const command = containerCommand(raw);
    if (command.length === 0) throw runtimeError(`container ${idOrName} has no command to run again`);
    if (raw.State?.Running !== true) throw runtimeError(`container ${idOrName} is not running`);
    try {
      const exec = await this.api.json<{ Id: string }>('POST', containerPath(raw.Id, '/exec'), {
        body: { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: command },
      });
      const socket = await this.api.hijack(
        `/exec/${segment(exec.Id)}/start`,
        {},
        { Detach: false, Tty: false },
      );
      return stdioOf(socket);
    } catch (err) {
      if (isGone(err)) throw runtimeError(`no container named ${idOrName}`, { cause: err });
      throw runtimeError(`cannot exec in ${idOrName}: ${engineMessage(err)}`, { cause: err });
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Networks

  async networkExists(name: string): Promise<boolean> {
    try {
      await this.api.json('GET', `/networks/${segment(name)}`);
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw runtimeError(`cannot inspect network ${name}: ${engineMessage(err)}`, { cause: err });
    }
  }

  async ensureNetwork(
    name: string,
    options: { internal: boolean; labels?: Record<string, string> },
  ): Promise<void> {
    if (await this.networkExists(name)) return;
    try {
      await this.api.json('POST', '/networks/create', {
        body: {
          Name: name,
          Driver: 'bridge',
          Internal: options.internal,
          Labels: options.labels ?? {},
          CheckDuplicate: true,
        },
      });
    } catch (err) {
      // Created concurrently by another moat process: fine.
      if (statusOf(err) === 409 || (await this.networkExists(name))) return;
      throw runtimeError(`cannot create network ${name}: ${engineMessage(err)}`, { cause: err });
    }
  }

  async removeNetwork(name: string): Promise<void> {
    try {
      await this.api.json('DELETE', `/networks/${segment(name)}`);
    } catch (err) {
      if (statusOf(err) !== 404)
        throw runtimeError(`cannot remove network ${name}: ${engineMessage(err)}`, { cause: err });
    }
  }
}

/** The path of a container, or of an action on it (`/start`, `/json`, ...). */
/**
 * A hijacked attach or exec connection as a stdio server's pipes: the multiplexed output split
 * into stdout and stderr, stdin written to the socket (ending it half-closes the connection).
 */
function stdioOf(socket: Duplex): AttachedStdio {
  const { stdout, stderr } = demux(socket);
  const stdin = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      socket.write(chunk, callback);
    },
    final(callback) {
      socket.end();
      callback();
    },
  });
  // A broken connection ends the reading side (demux) and fails pending writes.
  socket.on('error', (err) => stdin.destroy(err));
  return {
    stdin,
    stdout,
    stderr,
    close: () => {
      socket.destroy();
    },
  };
}

/** The command a container runs: its Entrypoint, then its Cmd (as the engine resolved them). */
export function containerCommand(raw: Pick<ContainerInspect, 'Config'>): string[] {
  const list = (value: string[] | string | null | undefined): string[] =>
    value === null || value === undefined ? [] : typeof value === 'string' ? [value] : value;
  return [...list(raw.Config?.Entrypoint), ...list(raw.Config?.Cmd)];
}

function containerPath(idOrName: string, action = ''): string {
  return `/containers/${segment(idOrName)}${action}`;
}

/**
 * `fromImage` and `tag` apart, as engines expect: a name without a tag means `latest` (an
 * empty tag would pull every tag); a digest goes in `tag`.
 */
function pullQuery(image: string): { fromImage: string; tag: string } {
  const at = image.indexOf('@');
  if (at >= 0) return { fromImage: image.slice(0, at), tag: image.slice(at + 1) };
  const colon = image.lastIndexOf(':');
  // A colon before the last `/` belongs to a registry port (`localhost:5000/app`).
  if (colon > image.lastIndexOf('/'))
    return { fromImage: image.slice(0, colon), tag: image.slice(colon + 1) };
  return { fromImage: image, tag: 'latest' };
}

/** The parts of the engine's container inspect answer Moat reads. */
export interface ContainerInspect {
  Id: string;
  Name: string;
  Image: string;
  Created?: string;
  Config?: {
    Image?: string;
    Labels?: Record<string, string> | null;
    Entrypoint?: string[] | string | null;
    Cmd?: string[] | string | null;
  };
  State?: { Status?: string; Running?: boolean; ExitCode?: number; StartedAt?: string; FinishedAt?: string };
  NetworkSettings?: {
    Ports?: Record<string, Array<{ HostIp: string; HostPort: string }> | null>;
    Networks?: Record<string, { IPAddress?: string } | undefined>;
  };
}

/**
 * The fix for a start failure whose cause is the engine's set-up, not the workload; empty when
 * Moat does not recognise the failure.
 */
function startFailureHint(message: string): string {
  if (/error setting rlimit/.test(message))
    return (
      '. The engine applies default ulimits that this machine does not allow (a sandbox or a container ' +
      'without CAP_SYS_RESOURCE). Fix: for Podman set `default_ulimits = []` under [containers] in ' +
      'containers.conf and restart the Podman service; for Docker remove `default-ulimits` from daemon.json'
    );
  return '';
}

function toContainerInfo(raw: ContainerInspect): ContainerInfo {
  const ports: PublishedPort[] = [];
  for (const [key, bindings] of Object.entries(raw.NetworkSettings?.Ports ?? {})) {
    const [port, protocol] = key.split('/');
    if (protocol !== 'tcp' || !bindings) continue;
    for (const b of bindings) {
      const hostPort = Number(b.HostPort);
      if (hostPort > 0) ports.push({ containerPort: Number(port), hostIp: b.HostIp || '0.0.0.0', hostPort });
    }
  }
  const ipAddresses: Record<string, string> = {};
  for (const [network, settings] of Object.entries(raw.NetworkSettings?.Networks ?? {})) {
    if (settings?.IPAddress) ipAddresses[network] = settings.IPAddress;
  }
  const status = raw.State?.Status as ContainerState | undefined;
  return {
    id: raw.Id,
    name: raw.Name.replace(/^\//, ''),
    image: raw.Config?.Image ?? raw.Image,
    state: status && STATES.includes(status) ? status : 'unknown',
    running: raw.State?.Running === true,
    exitCode: raw.State?.ExitCode ?? 0,
    labels: raw.Config?.Labels ?? {},
    ports,
    ipAddresses,
    ...(raw.Created ? { createdAt: raw.Created } : {}),
    ...(raw.State?.StartedAt ? { startedAt: raw.State.StartedAt } : {}),
    // Engines report Go's zero time for a container that never finished.
    ...(raw.State?.FinishedAt && !raw.State.FinishedAt.startsWith('0001-')
      ? { finishedAt: raw.State.FinishedAt }
      : {}),
  };
}
