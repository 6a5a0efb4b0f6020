/**
 * `moat registry serve`: a foreground process (like `moat proxy`), so a team runs it under its
 * own supervisor (systemd, a container, a Kubernetes Deployment); Ctrl-C or SIGTERM stops it.
 * It prints its URL on stdout; the token is read from a file and never printed or logged.
 */
import { readFile } from 'node:fs/promises';
import { errorMessage, usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { isLoopbackHost } from '../util/net.js';

export interface ServeFlags {
  host: string;
  port: string;
  file: string[];
  tokenFile?: string;
}

export async function serveRegistry(flags: ServeFlags, io: CliIO): Promise<void> {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65535) {
    throw usageError(`--port ${flags.port}: expected a port number from 0 to 65535`);
  }
  const token = flags.tokenFile === undefined ? undefined : await readToken(flags.tokenFile);
  const { serversToServe, serveRegistryApi } = await import('../registry/index.js');
  const { servers, files } = await serversToServe(flags.file);
  const server = await serveRegistryApi({
    host: flags.host,
    port,
    servers,
    ...(token ? { token } : {}),
  }).catch((err: unknown) => {
    throw usageError(`cannot listen on ${flags.host}:${port}: ${errorMessage(err)}`);
  });
  if (!token && !isLoopbackHost(flags.host)) {
    io.stderr.write(
      `Warning: serving on ${flags.host} without --token-file: anyone who reaches it can read it\n`,
    );
  }
  io.stderr.write(
    `Serving the MCP Registry API (${servers.length} servers: the built-in catalog${files.map((f) => `, ${f}`).join('')})` +
      `${token ? ', bearer token required' : ''}; Ctrl-C stops it\n`,
  );
  io.stdout.write(`${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
}

async function readToken(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(`--token-file ${path}: ${errorMessage(err)}`);
  }
  const token = text.trim();
  if (token === '' || /\s/.test(token))
    throw usageError(`--token-file ${path}: expected one token (no spaces)`);
  return token;
}
