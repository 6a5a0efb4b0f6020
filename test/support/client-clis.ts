/**
 * The real AI clients installed once per machine by scripts/client-clis.sh (from the npm
 * registry, pinned), run offline: HOME is the test's temp dir, and every non-loopback request
 * goes to a closed port (HTTP(S)_PROXY, honoured by Node with NODE_USE_ENV_PROXY, by Bun and by
 * Rust's reqwest), with the clients' own telemetry and update checks switched off. A missing
 * install fails the test (run scripts/client-clis.sh), it is never skipped.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'moat-test', 'clients');

/** The installed executable of `command` (claude, codex, gemini, qwen, opencode). */
export function clientBin(command: string): string {
  const dirs = existsSync(CACHE) ? readdirSync(CACHE).filter((d) => !d.startsWith('.')) : [];
  for (const dir of dirs) {
    const bin = join(CACHE, dir, 'node_modules', '.bin', command);
    if (existsSync(bin)) return bin;
  }
  throw new Error(`${command} is not installed under ${CACHE}; run scripts/client-clis.sh`);
}

const DEAD_PROXY = 'http://127.0.0.1:9';

export function offlineEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    HTTP_PROXY: DEAD_PROXY,
    HTTPS_PROXY: DEAD_PROXY,
    http_proxy: DEAD_PROXY,
    https_proxy: DEAD_PROXY,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    NODE_USE_ENV_PROXY: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    GEMINI_TELEMETRY_ENABLED: 'false',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
  };
}

/** Runs `<command> <args>` in `cwd` with the offline environment; resolves with its stdout and its stdout + stderr (ANSI removed). */
export function runClient(
  command: string,
  args: string[],
  home: string,
  cwd: string,
): Promise<{ stdout: string; output: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      clientBin(command),
      args,
      { cwd, env: offlineEnv(home), timeout: 120_000, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        // eslint-disable-next-line no-control-regex
        const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');
        const output = plain(`${stdout}${stderr}`);
        if (err) reject(new Error(`${command} ${args.join(' ')} failed: ${err.message}\n${output}`));
        else resolve({ stdout: plain(stdout), output });
      },
    );
  });
}
