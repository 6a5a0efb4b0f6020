/** Proxies in processes of their own (test/support/proxy-process.ts), for state shared through Redis. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { RunConfig, RunConfigInput } from '../../src/config/runconfig.js';
import type { HttpBackend } from '../../src/proxy/types.js';
import { testConfig } from './proxy-harness.js';
import { startRedis, type RedisServer } from './redis.js';

/** How long a proxy process may take to print its URL, and to exit after SIGTERM before SIGKILL. */
const START_MS = 30_000;
const STOP_GRACE_MS = 10_000;

export interface ProxyProcess {
  url: string;
  child: ChildProcess;
}

export function startProxyProcess(config: RunConfig, backend: HttpBackend): Promise<ProxyProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/proxy-process.ts'], {
    env: { ...process.env, MOAT_TEST_PROXY: JSON.stringify({ config, backend }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
      reject(new Error(`proxy process printed no URL within ${START_MS} ms: ${stderr}`));
    }, START_MS);
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (url) => {
      clearTimeout(timer);
      resolve({ url, child });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`proxy process exited (${code}): ${stderr}`));
    });
  });
}

/** SIGTERM to the process by its pid (SIGKILL after a grace period), resolved once it has exited. */
export function stopProxyProcess(p: ProxyProcess | undefined): Promise<void> {
  return new Promise((resolve) => {
    const pid = p?.child.pid;
    if (!p || p.child.exitCode !== null || p.child.signalCode !== null || pid === undefined) return resolve();
    const force = setTimeout(() => process.kill(pid, 'SIGKILL'), STOP_GRACE_MS);
    p.child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    process.kill(pid, 'SIGTERM');
  });
}

/** Two replicas of one workload sharing a real Redis; `stop()` stops both replicas, then Redis. */
export interface RedisReplicas {
  redis: RedisServer;
  a: ProxyProcess;
  b: ProxyProcess;
  stop(): Promise<void>;
}

/**
 * Starts a real Redis and two proxy processes with the same RunConfig (name included, so they are
 * one workload) in front of the streamable HTTP server at `backendUrl`, with sessions in Redis.
 * If a replica fails to start, whatever did start is stopped before the error is thrown.
 */
export async function startRedisReplicas(
  backendUrl: string,
  overrides: Partial<RunConfigInput> = {},
): Promise<RedisReplicas> {
  const redis = await startRedis();
  const config = testConfig({ ...overrides, scaling_config: { session_redis: { address: redis.address } } });
  const backend = { kind: 'http', url: backendUrl, transport: 'streamable-http', remote: false } as const;
  const started = await Promise.allSettled([
    startProxyProcess(config, backend),
    startProxyProcess(config, backend),
  ]);
  const [a, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  const stop = async () => {
    await Promise.all([stopProxyProcess(a), stopProxyProcess(b)]);
    await redis.stop();
  };
  if (!a || !b) {
    await stop();
    throw (started.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason;
  }
  return { redis, a, b, stop };
}
