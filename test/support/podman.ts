/**
 * One Podman API service per test run, started by the global setup on a socket in a temp dir
 * and stopped by PID at teardown. Tests reach it through MOAT_TEST_PODMAN_SOCKET. When Podman
 * is missing or does not start, the reason is kept in MOAT_TEST_PODMAN_ERROR and every test that
 * needs Podman fails with it (unit tests still run).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, openSync, closeSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { connectRuntime } from '../../src/runtime/connect.js';
import type { ContainerRuntime } from '../../src/runtime/types.js';

export const SOCKET_ENV = 'MOAT_TEST_PODMAN_SOCKET';
const ERROR_ENV = 'MOAT_TEST_PODMAN_ERROR';

/** Podman settings this sandbox needs (runc, cgroupfs, no ulimits, file events). */
export const CONTAINERS_CONF = fileURLToPath(new URL('./containers.conf', import.meta.url));

const INSTALL_HINT = 'install it with `apt-get install podman runc` (scripts/system-deps.sh does this)';

/** Registry settings: loopback registries (test/support/oci-registry.ts) are plain HTTP. */
export const REGISTRIES_CONF = fileURLToPath(new URL('./registries.conf', import.meta.url));

/** Environment for podman CLI calls made by tests (image builds). */
export function podmanEnv(): NodeJS.ProcessEnv {
  return { ...process.env, CONTAINERS_CONF, CONTAINERS_REGISTRIES_CONF: REGISTRIES_CONF };
}

export async function podmanCli(args: string[], input?: Buffer | Readable): Promise<string> {
  const run = promisify(execFile);
  if (input === undefined) {
    const { stdout } = await run('podman', args, { env: podmanEnv(), maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  }
  return new Promise((resolve, reject) => {
    const child = spawn('podman', args, { env: podmanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += String(d)));
    child.stderr.on('data', (d: Buffer) => (err += String(d)));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`podman ${args.join(' ')} failed (${code}): ${err.trim()}`)),
    );
    if (Buffer.isBuffer(input)) child.stdin.end(input);
    else input.pipe(child.stdin);
  });
}

function ping(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('error', () => resolve(false));
    req.once('timeout', () => req.destroy());
    req.end();
  });
}

async function waitForPing(socketPath: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(
        `podman system service exited with ${child.exitCode}: ${readFileSync(logFile, 'utf8').trim()}`,
      );
    if (await ping(socketPath)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`podman system service did not answer /_ping on ${socketPath} within 60 s`);
}

function stopByPid(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.pid === undefined) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    process.kill(child.pid, 'SIGTERM');
  });
}

export interface PodmanService {
  socketPath: string;
  stop(): Promise<void>;
}

/**
 * Starts `podman system service` with the given containers.conf on a socket in a temp dir and
 * waits until it answers; stop it with `stop()` (by PID). Throws when it does not start.
 */
export async function startPodmanApi(containersConf = CONTAINERS_CONF): Promise<PodmanService> {
  const dir = mkdtempSync(join(tmpdir(), 'moat-podman-'));
  const socketPath = join(dir, 'podman.sock');
  const logFile = join(dir, 'service.log');
  const log = openSync(logFile, 'a');
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child) await stopByPid(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    child = spawn('podman', ['system', 'service', '--time=0', `unix://${socketPath}`], {
      env: { ...process.env, CONTAINERS_CONF: containersConf, CONTAINERS_REGISTRIES_CONF: REGISTRIES_CONF },
      stdio: ['ignore', log, log],
    });
    const started = child;
    await new Promise<void>((resolve, reject) => {
      started.once('spawn', resolve);
      started.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'ENOENT' ? new Error(`podman is not installed: ${INSTALL_HINT}`) : err),
      );
    });
    await waitForPing(socketPath, started, logFile);
    return { socketPath, stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    closeSync(log);
  }
}

/** Global setup: starts the service and returns its teardown. Never throws (see MOAT_TEST_PODMAN_ERROR). */
export async function startPodmanService(): Promise<() => Promise<void>> {
  try {
    const service = await startPodmanApi();
    process.env[SOCKET_ENV] = service.socketPath;
    return () => service.stop();
  } catch (err) {
    process.env[ERROR_ENV] =
      `Podman API service unavailable: ${err instanceof Error ? err.message : String(err)}`;
    return () => Promise.resolve();
  }
}

/** The test run's Podman socket; throws (failing the test) when the service is not available. */
export function podmanSocket(): string {
  const socket = process.env[SOCKET_ENV];
  if (socket) return socket;
  throw new Error(
    process.env[ERROR_ENV] ??
      `${SOCKET_ENV} is not set: run the tests through vitest (test/support/global-setup.ts starts Podman)`,
  );
}

/** A ContainerRuntime connected to the test run's Podman. */
export function testRuntime(): Promise<ContainerRuntime> {
  return connectRuntime({ MOAT_RUNTIME_SOCKET: podmanSocket() });
}

/** A name unique to this process and call, for containers, networks and images. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
}
