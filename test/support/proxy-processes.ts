/** Proxies in processes of their own (test/support/proxy-process.ts), for state shared through Redis. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { RunConfig } from '../../src/config/runconfig.js';
import type { HttpBackend } from '../../src/proxy/types.js';

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
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (url) => resolve({ url, child }));
    child.once('exit', (code) => reject(new Error(`proxy process exited (${code}): ${stderr}`)));
  });
}

/** SIGTERM to the process by its pid, resolved once it has exited. */
export function stopProxyProcess(p: ProxyProcess | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!p || p.child.exitCode !== null || p.child.pid === undefined) return resolve();
    p.child.once('exit', () => resolve());
    process.kill(p.child.pid, 'SIGTERM');
  });
}
