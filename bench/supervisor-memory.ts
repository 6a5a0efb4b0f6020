/**
 * The memory of the real thing: `moat run` (detached) of a stdio MCP server in a Podman
 * container, then the supervisor process's resident memory read from /proc, idle after start,
 * after some calls through its proxy, and a quiet minute later (what the product gives back by
 * itself: no GC is forced here). `node --import tsx bench/supervisor-memory.ts` (needs
 * Podman; builds dist/ first with `npm run build`). Runs on its own Podman API service and
 * MOAT_HOME (bench/moat-on-podman.ts). Prints a Markdown table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { testServerImage } from '../test/support/images.js';
import { withMoatOnPodman } from './moat-on-podman.js';

const name = `bench-${process.pid}`;

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

await withMoatOnPodman(async (moat, home) => {
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
  await sleep(60_000);
  const quiet = residentMb(pid);
  const mb = (n: number) => `${n.toFixed(1)} MB`;
  process.stdout.write(
    [
      `Supervisor process of a detached stdio workload (\`moat run --transport stdio\`), Node ${process.version}:`,
      '',
      '| supervisor (moat supervise) | RSS | peak RSS |',
      '|---|---|---|',
      `| idle, 3 s after start | ${mb(idle.rss)} | ${mb(idle.peak)} |`,
      `| after 1000 tools/call through the proxy | ${mb(after.rss)} | ${mb(after.peak)} |`,
      `| 60 s later, idle meanwhile | ${mb(quiet.rss)} | ${mb(quiet.peak)} |`,
      '',
    ].join('\n'),
  );
});
