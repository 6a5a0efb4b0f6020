/**
 * `moat ui`: the local dashboard (docs/ui.md). By default it starts in the background and prints
 * its one-time link; `--foreground` serves in this process until Ctrl-C; `--stop` stops the one
 * that runs. Loopback only unless --allow-non-loopback.
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { runtimeError, usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { warnUser } from '../util/log.js';
import { isLoopbackHost } from '../util/net.js';
import { moatDirs } from '../util/paths.js';
import { lazyRuntime } from '../workloads/lifecycle.js';
import { WorkloadStore } from '../workloads/store.js';

interface UiOptions {
  port: number;
  host: string;
  allowNonLoopback: boolean;
  open: boolean;
  foreground: boolean;
  stop: boolean;
}

const CLI_ENTRY = fileURLToPath(new URL('./main.js', import.meta.url));
/** How long `moat ui` waits for the background dashboard to print its link. */
const READY_TIMEOUT_MS = 30_000;
/** A `moat run` from the registry page may pull or build an image. */
const RUN_TIMEOUT_MS = 15 * 60_000;

/** The dashboard runs registry entries with this very CLI (`moat run <entry> …`), without a terminal. */
function runMoat(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_ENTRY, ...args],
      { timeout: RUN_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function portNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('expected a port from 0 to 65535 (0: a free port)');
  return n;
}

export function uiCommand(io: CliIO): Command {
  return new Command('ui')
    .description('Serve the local dashboard (workloads, live state) and print its one-time link')
    .option('--port <port>', 'Port to listen on (default: a free port, printed)', portNumber, 0)
    .option('--host <host>', 'Address to listen on', '127.0.0.1')
    .option('--allow-non-loopback', 'Allow a --host other than a loopback address (warns)', false)
    .option('--open', 'Open the link in the default browser', false)
    .option('-f, --foreground', 'Serve in this process until Ctrl-C', false)
    .option('--stop', 'Stop the dashboard that runs in the background', false)
    .action(async (opts: UiOptions) => {
      if (opts.stop) {
        const { stopInstance } = await import('../ui/instance.js');
        const stopped = await stopInstance(moatDirs());
        io.stdout.write(stopped ? 'Stopped moat ui\n' : 'moat ui is not running\n');
        return;
      }
      if (!isLoopbackHost(opts.host) && !opts.allowNonLoopback) {
        throw usageError(
          `--host ${opts.host} is not a loopback address; add --allow-non-loopback to serve the dashboard to the network`,
        );
      }
      if (!isLoopbackHost(opts.host)) {
        warnUser(
          `the dashboard listens on ${opts.host}: anyone who can reach it and obtains the link controls your workloads; the link and cookie travel unencrypted (plain HTTP)`,
          io.stderr,
        );
      }
      const url = opts.foreground ? await serveForeground(opts, io) : await startBackground(opts, io);
      if (opts.open) openBrowser(url, io);
    });
}

/** Serves until SIGINT/SIGTERM; returns the link once it serves (the action then waits). */
async function serveForeground(opts: UiOptions, io: CliIO): Promise<string> {
  const { startUiServer } = await import('../ui/server.js');
  const { claimInstance, releaseInstance } = await import('../ui/instance.js');
  const dirs = moatDirs();
  let server: Awaited<ReturnType<typeof startUiServer>> | undefined;
  const other = await claimInstance(dirs, async () => {
    server = await startUiServer({
      host: opts.host,
      port: opts.port,
      store: new WorkloadStore(dirs),
      runtime: lazyRuntime(),
      runMoat,
    });
    return server.url;
  });
  if (other || !server) throw alreadyRunning(other?.url ?? '');
  const running = server;
  const stop = () => {
    void running
      .close()
      .then(() => releaseInstance(dirs))
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  io.stdout.write(`Moat UI at ${running.url} (Ctrl-C stops it)\nURL: ${running.loginUrl}\n`);
  return running.loginUrl;
}

function alreadyRunning(url: string): Error {
  return runtimeError(
    `moat ui already runs at ${url}; its link works once: "moat ui --stop", then "moat ui" prints a new one`,
  );
}

/**
 * Starts `moat ui --foreground` detached, logging to `<data>/logs/ui.log`, and reads its link
 * from a pipe (the token is never in a file or a process's arguments).
 */
async function startBackground(opts: UiOptions, io: CliIO): Promise<string> {
  const { runningInstance } = await import('../ui/instance.js');
  const dirs = moatDirs();
  const other = await runningInstance(dirs);
  if (other) throw alreadyRunning(other.url);
  mkdirSync(dirs.logs, { recursive: true, mode: 0o700 });
  const logPath = join(dirs.logs, 'ui.log');
  const logFd = openSync(logPath, 'a', 0o600);
  const args = ['ui', '--foreground', '--port', String(opts.port), '--host', opts.host];
  if (opts.allowNonLoopback) args.push('--allow-non-loopback');
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', logFd],
  });
  closeSync(logFd);
  const stdout = child.stdout;
  if (!stdout) throw runtimeError('moat ui could not be started: no pipe to read its link from');
  const link = await new Promise<string | undefined>((resolve) => {
    const lines = createInterface({ input: stdout });
    const timer = setTimeout(() => resolve(undefined), READY_TIMEOUT_MS);
    lines.on('line', (line) => {
      if (!line.startsWith('URL: ')) return;
      clearTimeout(timer);
      resolve(line.slice('URL: '.length));
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
  stdout.destroy();
  child.unref();
  if (!link) {
    const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-5).join('\n  ');
    throw runtimeError(`moat ui did not start; last lines of ${logPath}:\n  ${tail}`);
  }
  io.stdout.write(`Moat UI is running ("moat ui --stop" stops it).\nURL: ${link}\n`);
  return link;
}

/** The platform's opener; a missing one is a warning (the link is printed anyway). */
function openBrowser(url: string, io: CliIO): void {
  const opener =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
  child.once('error', () =>
    warnUser(`could not run ${opener} to open the browser; open the link above`, io.stderr),
  );
  child.unref();
}
