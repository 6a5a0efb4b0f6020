/**
 * A real MCP server (the streamable-HTTP test fixture, MCP SDK v1) running on the host, to play
 * the "remote" server of remote-URL workloads. Stopped by its PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { fixtureBundle } from '../fixtures/bundle.js';
import { freePort } from './ports.js';

export interface HostServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:PORT/mcp */
  url: string;
  stop(): Promise<void>;
}

async function waitForListening(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += String(d)));
    child.stderr?.on('data', (d: Buffer) => {
      out += String(d);
      if (out.includes('listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`host MCP server exited with ${code}: ${out}`)));
  });
}

export async function startHostServer(port?: number): Promise<HostServer> {
  port ??= await freePort();
  const child = spawn(process.execPath, [await fixtureBundle('http-server')], {
    env: { ...process.env, MCP_HOST: '127.0.0.1', MCP_PORT: String(port), MCP_TRANSPORT: 'streamable-http' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForListening(child);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.pid === undefined) return resolve();
        child.once('exit', () => resolve());
        process.kill(child.pid, 'SIGTERM');
      }),
  };
}

/**
 * A host MCP server for one test file (call at the top level): started before the file's tests,
 * stopped after them. Read `url` inside tests.
 */
export function testHostServer(): { readonly url: string } {
  let server: HostServer | undefined;
  beforeAll(async () => {
    server = await startHostServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get url() {
      if (!server) throw new Error('the host MCP server has not started');
      return server.url;
    },
  };
}
