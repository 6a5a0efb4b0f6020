/**
 * The set-up the benches that run the real `moat` share: their own Podman API service (stopped
 * by PID), a temporary MOAT_HOME, and the built CLI (`npm run build` first). Every workload, the
 * home and the service are removed afterwards, also when the bench fails.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startPodmanService, SOCKET_ENV } from '../test/support/podman.js';

const MOAT = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

/** Runs the built CLI in the bench's home; resolves with its stdout. */
export type MoatCli = (args: string[]) => Promise<string>;

export async function withMoatOnPodman(body: (moat: MoatCli, home: string) => Promise<void>): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'moat-bench-home-'));
  const moat: MoatCli = (args) => {
    const env = { ...process.env, MOAT_HOME: home, MOAT_RUNTIME_SOCKET: process.env[SOCKET_ENV] };
    return promisify(execFile)(process.execPath, [MOAT, ...args], { env, timeout: 180_000 }).then(
      (r) => r.stdout,
    );
  };
  const stopPodman = await startPodmanService();
  try {
    if (!process.env[SOCKET_ENV]) throw new Error(process.env.MOAT_TEST_PODMAN_ERROR ?? 'Podman unavailable');
    await body(moat, home);
  } finally {
    await moat(['rm', '--all']).catch((err: unknown) => process.stderr.write(`moat rm: ${String(err)}\n`));
    rmSync(home, { recursive: true, force: true });
    await stopPodman();
  }
}
