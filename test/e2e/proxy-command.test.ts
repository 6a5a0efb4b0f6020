/**
 * `moat proxy --config FILE`, as an operator-managed pod runs it: the real binary, a RunConfig file
 * alone (no workload state), secrets from the environment, a real MCP SDK client through it to a
 * real SDK server on loopback, and a clean stop on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startV2StreamableBackend, type HttpBackendServer } from '../support/mcp-http-backends.js';
import { ensureBuilt, MOAT_MAIN, moat, moatHome, removeHome } from '../support/moat-cli.js';
import { freePort } from '../support/ports.js';

let backend: HttpBackendServer;
let home: string;
beforeAll(async () => {
  await ensureBuilt();
  backend = await startV2StreamableBackend();
  home = moatHome();
});
afterAll(async () => {
  await backend.close();
  removeHome(home);
});

async function waitForHealth(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moat proxy exited ${child.exitCode}: ${output()}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`moat proxy did not answer ${url} within 20 s: ${output()}`);
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

describe('moat proxy --config', () => {
  it('serves a remote server from the RunConfig alone, with its policies and secrets from the environment', async () => {
    const port = await freePort();
    const configPath = join(home, 'runconfig.json');
    await writeFile(
      configPath,
      JSON.stringify({
        schema_version: 'v0.1.0',
        name: 'pod-proxy',
        image: '',
        remote_url: backend.url,
        transport: 'streamable-http',
        host: '127.0.0.1',
        port,
        tools_filter: ['echo'],
        header_forward: {
          add_plaintext_headers: { 'X-Tenant': 'blue' },
          add_headers_from_secret: { 'X-Api-Key': 'API_KEY_0' },
        },
      }),
    );
    const child = spawn(process.execPath, [MOAT_MAIN, 'proxy', '--config', configPath], {
      env: {
        ...process.env,
        MOAT_HOME: home,
        MOAT_SECRETS_PROVIDER: 'environment',
        MOAT_SECRET_API_KEY_0: 'k-123',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString('utf8')));
    try {
      await waitForHealth(`http://127.0.0.1:${port}/health`, child, () => output);
      const client = new Client({ name: 'pod-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
        const result = await client.callTool({ name: 'echo', arguments: { text: 'through the pod' } });
        expect(result.content).toEqual([{ type: 'text', text: 'through the pod' }]);
      } finally {
        await client.close();
      }
      const forwarded = backend.seen.filter((r) => r.method === 'POST');
      expect(forwarded.length).toBeGreaterThan(0);
      for (const r of forwarded) {
        expect(r.headers['x-api-key']).toBe('k-123');
        expect(r.headers['x-tenant']).toBe('blue');
      }
      expect(output).not.toContain('k-123');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited(child)).toBe(0);
    expect(output).toContain('stopping on request');
  });

  it('refuses a missing --config, a bad file and a non-remote RunConfig with exit 2 and one line', async () => {
    const missing = await moat(home, ['proxy']);
    expect(missing).toMatchObject({
      code: 2,
      stderr: 'Error: moat proxy: --config <file> is required (the RunConfig to run)\n',
    });
    const nothing = await moat(home, ['proxy', '--config', join(home, 'nope.json')]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/^Error: cannot read run configuration .*nope\.json/);
    const local = join(home, 'local.json');
    await writeFile(
      local,
      JSON.stringify({ name: 'x', image: 'i', transport: 'stdio', host: '127.0.0.1', port: 0 }),
    );
    const notRemote = await moat(home, ['proxy', '--config', local]);
    expect(notRemote.code).toBe(2);
    expect(notRemote.stderr).toContain('needs remote_url');
    const bad = join(home, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify({ name: 'x', image: '', transport: 'carrier-pigeon', host: 'h', port: 0 }),
    );
    const invalid = await moat(home, ['proxy', '--config', bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/invalid run configuration: .*transport/);
    expect((await moat(home, ['proxy', '--help'])).stdout).toContain('Usage: moat proxy --config <file>');
  });
});
