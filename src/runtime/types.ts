/**
 * The container runtime contract the workload layer calls. One implementation
 * (`docker/engine.ts`) speaks the Docker Engine API to Docker and Podman alike; the container
 * spec is built from a RunConfig by `container-spec.ts` (pure) and only applied here.
 */
import type { Readable } from 'node:stream';
import type { StdioPipes } from '../mcp/stdio.js';
import type { GatewayRule } from './egress/proxy-source.js';

/** Labels Moat puts on every container it creates (discovery, `moat list`). */
export const LABELS = {
  /** `true` on every Moat-managed container. */
  managed: 'moat',
  name: 'moat-name',
  baseName: 'moat-basename',
  transport: 'moat-transport',
  /** The proxy port on the host. */
  port: 'moat-port',
  group: 'moat-group',
  /** On an isolated workload: its egress proxy container (see egress/sandbox.ts). */
  egress: 'moat-egress',
  /** On an isolated workload: the relay container that owns its network namespace. */
  relay: 'moat-relay',
  /** On an isolated workload: the volume holding its sandbox sockets. */
  sandboxVolume: 'moat-sandbox-volume',
  /** On a sandbox container (egress, relay): the workload it serves (it is not a workload itself). */
  egressFor: 'moat-egress-for',
} as const;

export interface BindMount {
  /** Absolute host path. */
  source: string;
  /** Absolute path inside the container. */
  target: string;
  readOnly: boolean;
}

export interface PortBinding {
  /** Port inside the container (TCP). */
  containerPort: number;
  /** Host address the port is published on (127.0.0.1 unless the user asked otherwise). */
  hostIp: string;
  /** Host port; 0 lets the runtime pick a free one (read it back with `inspect`). */
  hostPort: number;
}

/** Everything needed to create one container; built by `buildContainerSpec`, applied by the runtime. */
export interface ContainerSpec {
  name: string;
  image: string;
  /** Server arguments (`Cmd`); the image's entrypoint is kept unless `entrypoint` is set. */
  cmd: string[];
  entrypoint?: string[];
  env: Record<string, string>;
  labels: Record<string, string>;
  mounts: BindMount[];
  /** Container paths covered by an empty read-only tmpfs (directories hidden by ignore files). */
  tmpfs?: string[];
  ports: PortBinding[];
  /**
   * `bridge`, `host`, `none`, the name of an existing network, or `container:<relay>` for a
   * sandboxed workload (which joins its relay's network namespace).
   */
  networkMode: string;
  /** Stdio servers: stdin kept open for attaching, no TTY. */
  attachStdio: boolean;
  /**
   * The workload's network sandbox (egress/sandbox.ts): `createContainer` creates the egress
   * proxy and relay containers and their volume, publishes `ports` on the egress proxy, and sets
   * HTTP(S)_PROXY; `removeContainer` removes them with the workload.
   */
  sandbox?: SandboxSpec;
  /** Only when a permission profile asks for it (warned about loudly). */
  privileged: boolean;
  capDrop: string[];
  securityOpt: string[];
}

/** The rules and ports of a workload's network sandbox. */
export interface SandboxSpec {
  /** The profile's insecure_allow_all; else only `allowHosts` x `allowPorts` (both empty: nothing). */
  allowAll: boolean;
  allowHosts: string[];
  allowPorts: number[];
  gateway: GatewayRule;
  /** The port the workload reaches the proxy at on its loopback (HTTP_PROXY). */
  proxyPort: number;
  /** HTTP servers: the port the server listens on, relayed from the published port. */
  ingressPort?: number;
}

export type ContainerState =
  'created' | 'running' | 'paused' | 'restarting' | 'removing' | 'exited' | 'dead' | 'unknown';

export interface PublishedPort {
  containerPort: number;
  hostIp: string;
  hostPort: number;
}

export interface ContainerInfo {
  id: string;
  /** Without the leading `/`. */
  name: string;
  image: string;
  state: ContainerState;
  running: boolean;
  /** Exit code of the last run (0 while running or never started). */
  exitCode: number;
  labels: Record<string, string>;
  /** Host bindings of published TCP ports. */
  ports: PublishedPort[];
  /** Network name → the container's IPv4 address on it. */
  ipAddresses: Record<string, string>;
  createdAt?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface PullProgress {
  /** `check`: looking for the image; `pull`: a pull status line; `done`: image ready. */
  phase: 'check' | 'pull' | 'done';
  image: string;
  message: string;
}

export interface EnsureImageOptions {
  onProgress?: (progress: PullProgress) => void;
  /** Abort a pull in progress. */
  signal?: AbortSignal;
}

/** One event of an image build (`POST /build`). */
export interface BuildProgress {
  /** `step`: a new Containerfile step began; `output`: a line the step printed; `done`: image ready. */
  phase: 'step' | 'output' | 'done';
  image: string;
  message: string;
}

export interface BuildImageOptions {
  /** The reference the image gets (`t`). */
  tag: string;
  /** The build context: a tar stream with the Containerfile at its root. */
  context: Readable;
  /** Name of the Containerfile inside the context. */
  containerfile: string;
  /** Build arguments (e.g. proxy settings; none of them end up in the image). */
  buildArgs?: Record<string, string>;
  labels?: Record<string, string>;
  onProgress?: (progress: BuildProgress) => void;
  signal?: AbortSignal;
}

export interface EnsuredImage {
  /** The image ID (`sha256:…`). */
  id: string;
  /** Where the image came from this time. */
  source: 'local' | 'pulled';
}

export interface LogsOptions {
  follow?: boolean;
  /** Default: both. */
  stdout?: boolean;
  stderr?: boolean;
  /** Only the last N lines. */
  tail?: number;
}

/** A stdio server's pipes; stderr is kept apart from stdout (it is never JSON-RPC). */
export interface AttachedStdio extends StdioPipes {
  stderr: Readable;
}

export interface RuntimeInfo {
  /** How we reached it: `unix:///path` or `tcp://host:port`. */
  endpoint: string;
  /** `podman` when the engine reports a Podman component, else `docker`. */
  flavor: 'podman' | 'docker';
  version: string;
  apiVersion: string;
}

export interface ContainerRuntime {
  readonly info: RuntimeInfo;
  /**
   * Makes the image available locally. `latest` or untagged: try a pull first and fall back
   * to a local copy; other tags and digests: use the local image, pull only when missing.
   * Not found anywhere → runtimeError naming the image.
   */
  ensureImage(image: string, options?: EnsureImageOptions): Promise<EnsuredImage>;
  /** The local image's ID, or undefined when it is not present. */
  findImage(image: string): Promise<string | undefined>;
  /**
   * Builds and tags an image from a tar context (`POST /build`). A failing step → runtimeError
   * naming the step, with the last lines it printed.
   */
  buildImage(options: BuildImageOptions): Promise<void>;
  /** Creates (does not start) the container; returns its ID. Name taken → runtimeError. */
  createContainer(spec: ContainerSpec): Promise<string>;
  startContainer(idOrName: string): Promise<void>;
  /** Stops with SIGTERM, then SIGKILL after `timeoutSeconds` (default 10). Already stopped is fine. */
  stopContainer(idOrName: string, timeoutSeconds?: number): Promise<void>;
  /** Removes the container (force kills a running one) and its network sandbox. Missing is fine. */
  removeContainer(idOrName: string): Promise<void>;
  /** undefined when no such container exists. */
  inspectContainer(idOrName: string): Promise<ContainerInfo | undefined>;
  /** Containers (running or not) carrying all the given labels; Moat's own by default. */
  listContainers(labels?: Record<string, string>): Promise<ContainerInfo[]>;
  /** Resolves with the exit code when the container stops. */
  waitContainer(idOrName: string): Promise<number>;
  /** Demultiplexed log text (stdout and stderr lines interleaved as written). */
  logs(idOrName: string, options?: LogsOptions): Promise<Readable>;
  /**
   * Attaches to a stdio server's stdin/stdout/stderr (with an empty request body, so Podman
   * does not feed the attach options into stdin). Attach before `startContainer` so no early
   * output is lost. stdout ends when the server exits. On Podman, closing the attachment
   * closes the server's stdin (most stdio servers then exit): keep one attachment per run
   * and restart the container rather than re-attaching.
   */
  attachStdio(idOrName: string): Promise<AttachedStdio>;
  /**
   * Runs the running container's own command (its Entrypoint and Cmd) once more inside it, as an
   * exec with pipes of its own (stdin, and stdout and stderr apart): a second process of a stdio
   * server. It ends when its stdin ends (`close()`) or the container stops.
   */
  execStdio(idOrName: string): Promise<AttachedStdio>;
  networkExists(name: string): Promise<boolean>;
  /** Creates a network if missing (`internal`: no route out). Concurrent creation is tolerated. */
  ensureNetwork(name: string, options: { internal: boolean; labels?: Record<string, string> }): Promise<void>;
  /** Removes a network; missing is fine. */
  removeNetwork(name: string): Promise<void>;
}
