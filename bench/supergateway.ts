/**
 * The stdio peer: supergateway (npm, pinned in devDependencies) fronting a stdio MCP server over
 * streamable HTTP, stateful (one server process per MCP session, as Moat keeps one stdio server
 * behind its sessions). Started as its own process; `url` is its MCP endpoint.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('../node_modules/supergateway/dist/index.js', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

/** A port free on loopback right now (supergateway and thv-proxyrunner take a port number, not 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A shell word for supergateway's --stdio (it runs the command through a shell). */
const shellWord = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

export async function startSupergateway(
  command: string[],
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ENTRY,
      '--stdio',
      command.map(shellWord).join(' '),
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
      '--logLevel',
      'none',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const url = `http://127.0.0.1:${port}/mcp`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(5000)]);
  };
  // Ready when its HTTP server answers (any status): bounded.
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`supergateway exited (${child.exitCode}) before listening`);
    const answered = await fetch(url, { method: 'GET', signal: AbortSignal.timeout(1000) }).then(
      async (res) => (await res.arrayBuffer(), true),
      () => false,
    );
    if (answered) return { url, pid: child.pid!, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`supergateway did not listen on ${url} within ${READY_TIMEOUT_MS / 1000} s`);
    }
    await sleep(100);
  }
}
