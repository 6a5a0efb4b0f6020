/**
 * The walk-through behind scripts/demo.sh. No registry is reachable here, so the server image is
 * built locally from host files (Node and a small MCP server), the same way the tests do.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startPodmanService, SOCKET_ENV } from '../test/support/podman.js';
import { testServerImage } from '../test/support/images.js';

const MOAT = join(import.meta.dirname, '../dist/cli/main.js');
// A fixed tag: moat uses the local image (a `latest` tag would first try a registry pull).
const IMAGE = 'localhost/moat-demo-server:1.0';

function moat(env: NodeJS.ProcessEnv, ...args: string[]): string {
  process.stdout.write(`\n$ moat ${args.join(' ')}\n`);
  const result = spawnSync(process.execPath, [MOAT, ...args], { env, encoding: 'utf8' });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  if (result.status !== 0) throw new Error(`moat ${args.join(' ')} exited with ${result.status}`);
  return result.stdout;
}

async function callThroughProxy(url: string): Promise<void> {
  const client = new Client({ name: 'moat-demo', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const { tools } = await client.listTools();
    process.stdout.write(`\nTools the proxy exposes: ${tools.map((t) => t.name).join(', ')}\n`);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello through moat' } });
    const [first] = result.content as Array<{ text?: string }>;
    process.stdout.write(`echo answered through the proxy: ${first?.text ?? '(no text)'}\n`);
  } finally {
    await client.close();
  }
}

const stopPodman = await startPodmanService();
const home = mkdtempSync(join(tmpdir(), 'moat-demo-'));
try {
  const socket = process.env[SOCKET_ENV];
  if (!socket) throw new Error(process.env.MOAT_TEST_PODMAN_ERROR ?? 'the Podman API service did not start');
  const env = { ...process.env, MOAT_HOME: home, MOAT_RUNTIME_SOCKET: socket };

  process.stdout.write(`Building the demo server image ${IMAGE} from host files...\n`);
  await testServerImage('stdio-server', { tag: IMAGE });

  moat(env, 'version');
  const runOutput = moat(
    env,
    'run',
    '--name',
    'demo',
    '--transport',
    'stdio',
    '--tools',
    'echo,whoami',
    IMAGE,
  );
  const url = /URL: (\S+)/.exec(runOutput)?.[1];
  if (!url) throw new Error('moat run printed no URL');
  moat(env, 'list');
  await callThroughProxy(url);
  moat(env, 'stop', 'demo');
  moat(env, 'list', '--all');
  moat(env, 'start', 'demo');
  moat(env, 'logs', 'demo', '--proxy');
  moat(env, 'rm', 'demo');
  moat(env, 'list', '--all');
  process.stdout.write(
    '\nDemo finished: the workload ran in Podman behind the moat proxy and was removed.\n',
  );
} finally {
  rmSync(home, { recursive: true, force: true });
  await stopPodman();
}
