/**
 * The memory of the real thing: `moat run` (detached) of a stdio MCP server in a Podman
 * container, then the supervisor process's resident memory read from /proc, idle after start and
 * after some calls through its proxy. `node --import tsx bench/supervisor-memory.ts` (needs
 * Podman; builds dist/ first with `npm run build`). Starts its own Podman API service and stops
 * it by PID; removes the workload and its MOAT_HOME afterwards. Prints a Markdown table.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { testServerImage } from '../test/support/images.js';
import { startPodmanService, SOCKET_ENV } from '../test/support/podman.js';

const MOAT = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'moat-bench-home-'));
const name = `bench-${process.pid}`;

function moat(args: string[]): Promise<string> {
  const env = { ...process.env, MOAT_HOME: home, MOAT_RUNTIME_SOCKET: process.env[SOCKET_ENV] };
  return promisify(execFile)(process.execPath, [MOAT, ...args], { env, timeout: 120_000 }).then(
    (r) => r.stdout,
  );
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
function residentMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function callTools(url: string, calls: number): Promise<void> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  for (let i = 0; i < calls; i++) await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
  await client.close();
}

const stopPodman = await startPodmanService();
try {
  if (!process.env[SOCKET_ENV]) throw new Error(process.env.MOAT_TEST_PODMAN_ERROR ?? 'Podman unavailable');
  const image = await testServerImage('stdio-server');
  const out = await moat(['run', '--transport', 'stdio', '--name', name, image]);
  const url = /https?:\/\/\S+\/mcp/.exec(out)?.[0];
  if (!url) throw new Error(`no URL in the output of moat run: ${out}`);
  const status = JSON.parse(readFileSync(join(home, 'data/statuses', `${name}.json`), 'utf8')) as {
    process_id: number;
  };
  const pid = status.process_id;
  await sleep(3000);
  const idle = residentMb(pid);
  await callTools(url, 1000);
  await sleep(3000);
  const after = residentMb(pid);
  const mb = (n: number) => `${n.toFixed(1)} MB`;
  process.stdout.write(
    [
      `Supervisor process of a detached stdio workload (\`moat run --transport stdio\`), Node ${process.version}:`,
      '',
      '| supervisor (moat supervise) | RSS | peak RSS |',
      '|---|---|---|',
      `| idle, 3 s after start | ${mb(idle.rss)} | ${mb(idle.peak)} |`,
      `| after 1000 tools/call through the proxy | ${mb(after.rss)} | ${mb(after.peak)} |`,
      '',
    ].join('\n'),
  );
} finally {
  await moat(['rm', '--all']).catch((err: unknown) => process.stderr.write(`moat rm: ${String(err)}\n`));
  rmSync(home, { recursive: true, force: true });
  await stopPodman();
}
