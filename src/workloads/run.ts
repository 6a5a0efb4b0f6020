/**
 * Starts a workload from a complete, validated RunConfig: checks the name and group, picks the
 * proxy port, saves the RunConfig (the restart source) before anything starts, then runs the
 * supervisor in a detached background process (default) or in the foreground (-f), in both cases
 * started with the proxy launch settings (util/proxy-launch.ts).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULTS } from '../config/defaults.js';
import { groupOf, runsContainer } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { loginBeforeDetach } from '../auth/outbound/workload.js';
import { prepareWorkloadSecrets, type SecretToStore } from '../secrets/workload.js';
import { runtimeError, usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { warnUser } from '../util/log.js';
import { PROXY_NODE_FLAGS, proxyLaunchEnv } from '../util/proxy-launch.js';
import { configuresInboundAuth } from '../auth/inbound/settings.js';
import { isLoopbackHost } from '../util/net.js';
import { effectiveProfile, isolationDropped } from '../runtime/container-spec.js';
import { overlaysForSpec, overlaysReport } from '../runtime/overlays.js';
import type { ImageProvenance } from '../runtime/verify/provenance.js';
import { collectMounts } from '../runtime/permissions.js';
import { imageProgressDisplay } from '../runtime/progress.js';
import { lazyRuntime } from './lifecycle.js';
import { assertValidName, sanitizeWorkloadName } from './names.js';
import { resolveProxyPort } from './ports.js';
import { checkRemoteReachable } from './remote-check.js';
import { applyStatusChange, type StatusRecord } from './status.js';
import { WorkloadStore } from './store.js';
import { SUPERVISE_FOREGROUND, SUPERVISE_REMOVE_AFTER, superviseInForeground } from './foreground.js';
import { IMAGE_PREPARED_ENV } from './supervisor.js';
import { announceWorkloadChange } from './changes.js';

export interface RunRequest {
  /** The complete, validated RunConfig (from flags or --from-config). */
  config: RunConfig;
  /** -f/--foreground: block until the workload exits, then clean up. */
  foreground: boolean;
  /** The config came from --from-config. */
  fromConfig: boolean;
  /** Secrets given as flag values, stored in the secrets manager before the workload starts. */
  secretsToStore?: readonly SecretToStore[];
  /** --skip-remote-check: start a remote workload even when its server does not answer now. */
  skipRemoteCheck?: boolean;
  /**
   * What the image's registry entry promises about its origin, checked under
   * `image_verification` before the image is pulled; undefined when the image has no entry.
   */
  provenance?: ImageProvenance;
}

export async function runWorkload(
  request: RunRequest,
  io: CliIO,
  store = new WorkloadStore(),
): Promise<void> {
  const named = normalizeName(request.config, io.stderr);
  // A taken name or a missing group fails first, before secrets are opened or an image is built or looked up.
  await ensureGroup(store, named.group as string);
  // An aggregate serves a group that must exist too (`default` is created on first use).
  if (named.aggregate) await ensureGroup(store, named.aggregate.group);
  await assertNameFree(store, named.name);
  if (named.remote_url && !request.skipRemoteCheck) await checkRemoteReachable(named.remote_url);
  const config = await withVerifiedImage(await withBuiltImage(named, io), request.provenance, io);
  // Before anything is saved: a missing secret or a wrong password fails here, on the terminal.
  const supervisorEnv = await prepareOnTerminal(config, io, request.secretsToStore);
  await claimWorkload(store, config);
  if (request.foreground) {
    // Like ToolHive: a foreground run cleans up after itself, unless it came from a config file.
    await runForeground(store, config.name, io, { removeAfter: !request.fromConfig, supervisorEnv });
  } else {
    await startDetached(store, config.name, io, supervisorEnv);
  }
}

/**
 * A protocol target (npx://, uvx://, go://) runs the image built from it: built now with a
 * progress display, or the one built before from the same inputs. The saved RunConfig names that
 * image, so `moat start` restarts it without building.
 */
async function withBuiltImage(config: RunConfig, io: CliIO): Promise<RunConfig> {
  if (config.protocol_target === undefined || !runsContainer(config)) return config;
  // Loaded here, like the image verification below: a remote workload or a plain image needs neither.
  const { buildProtocolImage, requestFromRunConfig } = await import('../runtime/build/build.js');
  const request = requestFromRunConfig(config.protocol_target, config.runtime_config);
  const display = imageProgressDisplay(io.stderr);
  try {
    const runtime = await lazyRuntime()();
    const image = await buildProtocolImage(runtime, request, (progress) => display.onProgress(progress));
    return { ...config, image };
  } catch (err) {
    display.fail();
    throw err;
  }
}

/**
 * --image-verification before the image is pulled; a verified image runs (and restarts) pinned to
 * the digest that was verified.
 */
async function withVerifiedImage(
  config: RunConfig,
  provenance: ImageProvenance | undefined,
  io: CliIO,
): Promise<RunConfig> {
  if (!runsContainer(config)) return config;
  const { checkImageVerification } = await import('../runtime/verify/policy.js');
  const image = await checkImageVerification({
    image: config.image,
    mode: config.image_verification ?? DEFAULTS.imageVerification,
    provenance,
    warn: (message) => warnUser(message, io.stderr),
  });
  return { ...config, image };
}

/**
 * What a person must see about a workload that is about to start: printed once on the terminal
 * by prepareOnTerminal, after everything was checked, not only written to the proxy log.
 */
export function startWarnings(config: RunConfig): string[] {
  const warnings: string[] = [];
  const dropped = isolationDropped(config);
  if (dropped) warnings.push(dropped);
  if (!configuresInboundAuth(config.oidc_config) && !isLoopbackHost(config.host))
    warnings.push(
      `UNAUTHENTICATED proxy on non-loopback address ${config.host}: anyone who can reach the port acts ` +
        'as the local user; configure --oidc-issuer (see docs/security.md)',
    );
  return warnings;
}

/**
 * What `moat run` and `moat start` do on the terminal before a supervisor takes over, so a person
 * sees it and its failures: secrets are stored and checked (prepareSecrets), the image is pulled
 * or found with a progress display, then the start warnings are printed. Returns the environment
 * the supervisor needs.
 */
export async function prepareOnTerminal(
  config: RunConfig,
  io: CliIO,
  toStore: readonly SecretToStore[] = [],
): Promise<Record<string, string>> {
  const env = await prepareSecrets(config, toStore);
  if (runsContainer(config)) {
    // Resolved here too, so a bad ignore file fails on the terminal and --print-resolved-overlays shows there.
    const mounts = collectMounts(effectiveProfile(config), config.volumes ?? [], process.cwd());
    const overlays = overlaysForSpec({ mounts }, config.ignore_config);
    if (config.ignore_config?.PrintOverlays) io.stderr.write(overlaysReport(overlays));
    const display = imageProgressDisplay(io.stderr);
    try {
      const runtime = await lazyRuntime()();
      await runtime.ensureImage(config.image, { onProgress: (progress) => display.onProgress(progress) });
    } catch (err) {
      display.fail();
      throw err;
    }
    env[IMAGE_PREPARED_ENV] = config.image;
  }
  for (const warning of startWarnings(config)) warnUser(warning, io.stderr);
  return env;
}

/**
 * Opens the secrets manager in this (terminal) process when the workload uses secrets: stores
 * flag-value secrets, checks every reference, and returns the environment the supervisor needs
 * to open the same provider without a prompt.
 */
export async function prepareSecrets(
  config: RunConfig,
  toStore: readonly SecretToStore[] = [],
): Promise<Record<string, string>> {
  const { provider, childEnv } = await prepareWorkloadSecrets(config, toStore);
  // OAuth to a remote logs in here, on the terminal; the supervisor finds the stored tokens.
  if (provider) await loginBeforeDetach(config, provider);
  return childEnv;
}

/** Sanitises the name (with a warning when it changed) and fills the names derived from it. */
function normalizeName(config: RunConfig, stderr: NodeJS.WritableStream): RunConfig {
  const name = sanitizeWorkloadName(config.name);
  if (name !== config.name) {
    warnUser(
      `the workload name ${JSON.stringify(config.name)} contained invalid characters; using "${name}"`,
      stderr,
    );
  }
  const renamed = name !== config.name;
  return {
    ...config,
    name,
    container_name: renamed || !config.container_name ? name : config.container_name,
    base_name: renamed || !config.base_name ? name : config.base_name,
    group: groupOf(config),
  };
}

/** The group must exist; `default` is created on first use. */
async function ensureGroup(store: WorkloadStore, group: string): Promise<void> {
  assertValidName(group, 'group name');
  if (group === DEFAULTS.group) {
    await store.createGroup(group);
  } else if (!(await store.readGroup(group))) {
    throw usageError(`group "${group}" does not exist; create it with "moat group create ${group}"`);
  }
}

/** The name is free, or held by a workload whose last run ended in `error` (which may be replaced). */
async function assertNameFree(store: WorkloadStore, name: string): Promise<void> {
  const exists = (await store.workloadNames()).includes(name);
  // Unreadable state counts as existing: it is never overwritten silently.
  const existingStatus = await store.readStatus(name).catch(() => undefined);
  if (exists && existingStatus?.status !== 'error') {
    throw usageError(
      `workload "${name}" already exists; choose another --name, ` +
        `or remove it first with "moat rm ${name}" (or restart it with "moat restart ${name}")`,
    );
  }
}

/**
 * Reserves the name (under the workload's lock, so two concurrent runs cannot both win), picks
 * the proxy port, and saves the RunConfig and a fresh `starting` status. A workload whose last
 * run ended in `error` may be replaced.
 */
async function claimWorkload(store: WorkloadStore, config: RunConfig): Promise<RunConfig> {
  return store.withWorkloadLock(config.name, async () => {
    await assertNameFree(store, config.name); // again, under the lock: a concurrent run may have won
    const saved = await resolvePorts(config);
    await store.saveRunConfig(saved);
    await rm(store.logPath(saved.name), { force: true }); // a new workload starts a new log
    await store.writeStatus(
      saved.name,
      applyStatusChange(undefined, { status: 'starting', context: 'run configuration saved' }, new Date()),
    );
    return saved;
  });
}

/**
 * Port 0 means "pick one": the proxy port and, for SSE/streamable-HTTP containers, the port the
 * server listens on. The choices are saved, so restarts keep the same URL.
 */
async function resolvePorts(config: RunConfig): Promise<RunConfig> {
  const port = await resolveProxyPort(config.host, config.port);
  const needsTarget = config.transport !== 'stdio' && runsContainer(config) && !config.target_port;
  const targetPort = needsTarget ? await resolveProxyPort('127.0.0.1', 0) : config.target_port;
  const auto = [
    ...(config.port === 0 ? (['port'] as const) : []),
    ...(needsTarget ? (['target_port'] as const) : []),
  ];
  return {
    ...config,
    port,
    ...(targetPort === undefined ? {} : { target_port: targetPort }),
    ...(auto.length > 0 ? { auto_ports: auto } : {}),
  };
}

/** `moat supervise` lives in the same CLI entry as every other command. */
const CLI_ENTRY = fileURLToPath(new URL('../cli/main.js', import.meta.url));

/** How long `moat run`/`moat start` wait for a detached workload to report running. */
const READY_TIMEOUT_MS = 10 * 60_000;

/**
 * Spawns the supervisor in its own session (it survives the terminal), logging to the
 * workload's log file, and waits until it reports `running` (prints the URL) or fails (prints
 * the end of its log).
 */
export async function startDetached(
  store: WorkloadStore,
  name: string,
  io: CliIO,
  supervisorEnv: Record<string, string>,
): Promise<void> {
  const logPath = store.logPath(name);
  await mkdir(dirname(logPath), { recursive: true, mode: 0o700 });
  const logFd = openSync(logPath, 'a', 0o600);
  const child = spawn(process.execPath, [...PROXY_NODE_FLAGS, CLI_ENTRY, 'supervise', name], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: proxyLaunchEnv({ ...process.env, ...supervisorEnv, MOAT_DETACHED: '1' }),
  });
  closeSync(logFd);
  let exitCode: number | null | undefined;
  child.once('exit', (code, signal) => (exitCode = code ?? (signal ? 128 : 1)));
  child.once('error', () => (exitCode = 1));
  child.unref();
  if (child.pid !== undefined) await store.updateStatus(name, { process_id: child.pid }, { mustExist: true });

  const status = await waitUntilRunning(store, name, () => exitCode, io.stderr);
  await announceWorkloadChange({ kind: 'running', name });
  io.stdout.write(`Workload "${name}" is running.\nURL: ${status.url ?? '(unknown)'}\n`);
  if (status.metrics_url) io.stdout.write(`Metrics: ${status.metrics_url}\n`);
  if (status.status === 'unhealthy')
    warnUser(`workload "${name}" is unhealthy: ${status.status_context}`, io.stderr);
}

/** A start slower than this says what it is waiting for (each new step once), not nothing. */
const QUIET_START_MS = 3000;

async function waitUntilRunning(
  store: WorkloadStore,
  name: string,
  exitCode: () => number | null | undefined,
  stderr: NodeJS.WritableStream,
): Promise<StatusRecord> {
  const started = Date.now();
  const deadline = started + READY_TIMEOUT_MS;
  let shown: string | undefined;
  for (;;) {
    const status = await store.readStatus(name);
    const step = status?.status_context;
    if (step && step !== shown && Date.now() - started > QUIET_START_MS) {
      stderr.write(`Still starting: ${step}\n`);
      shown = step;
    }
    // Unhealthy is up too: a remote started with --skip-remote-check may be found down at once.
    if (status?.status === 'running' || status?.status === 'unhealthy') return status;
    const exited = exitCode();
    if (status?.status === 'error' || exited !== undefined) {
      const reason =
        status?.status === 'error' ? status.status_context : `the supervisor exited (code ${exited})`;
      throw runtimeError(`workload "${name}" failed to start: ${reason}${logTail(store.logPath(name))}`);
    }
    if (Date.now() > deadline) {
      throw runtimeError(
        `workload "${name}" did not report running in time; see "moat logs --proxy ${name}"`,
      );
    }
    await sleep(100);
  }
}

/** The last lines of the supervisor log, indented, for an error message. */
function logTail(path: string, lines = 15): string {
  try {
    const tail = readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines);
    return tail.length && tail[0] !== '' ? `\nLast lines of ${path}:\n  ${tail.join('\n  ')}` : '';
  } catch {
    return '';
  }
}

export interface ForegroundOptions {
  /** Delete the container and all state when the workload ends (a run not from a config file). */
  removeAfter: boolean;
  /** The environment the supervisor needs (prepareOnTerminal). */
  supervisorEnv: Record<string, string>;
}

/**
 * Runs the supervisor in the foreground until the workload ends or Ctrl-C/SIGTERM arrives, then
 * (`removeAfter`) deletes the container and all state. Everything on the terminal is done by now,
 * so this process becomes `moat supervise --foreground` started with the proxy launch settings,
 * as a detached supervisor is (process.execve: the same PID, terminal, signals and exit code, and
 * none of the command-line modules kept in memory). A Node without process.execve (before
 * 22.15) supervises in this process, without the launch settings.
 */
export async function runForeground(
  store: WorkloadStore,
  name: string,
  io: CliIO,
  options: ForegroundOptions,
): Promise<void> {
  if (process.execve) {
    const flags = [SUPERVISE_FOREGROUND, ...(options.removeAfter ? [SUPERVISE_REMOVE_AFTER] : [])];
    process.execve(
      process.execPath,
      [process.execPath, ...PROXY_NODE_FLAGS, CLI_ENTRY, 'supervise', ...flags, name],
      proxyLaunchEnv({ ...process.env, ...options.supervisorEnv }),
    );
  }
  // The same environment a detached supervisor gets, so in-process secret reads do not prompt again.
  Object.assign(process.env, options.supervisorEnv);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    await superviseInForeground(store, name, io, {
      removeAfter: options.removeAfter,
      signal: controller.signal,
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
