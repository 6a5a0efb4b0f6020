/**
 * Runs the real `moat` on a real pseudo-terminal (util-linux `script`), the way a person's
 * terminal runs it: bounded in time and in bytes read, stopped by PID.
 */
import { spawn } from 'node:child_process';
import { MOAT_MAIN, moatEnv } from './moat-cli.js';

export interface PtyRun {
  code: number | null;
  output: string;
  bytes: number;
  timedOut: boolean;
}

export interface PtyOptions {
  home: string;
  /** What the terminal reports as its width. */
  columns?: number;
  /**
   * Called with the output so far on each chunk, once per run it returns true (e.g. to stop it).
   * `type` sends keystrokes to the terminal (only with `keyboard`).
   */
  onOutput?: (output: string, type: (keys: string) => void) => boolean;
  /** Connect a keyboard (the run's stdin is otherwise empty). */
  keyboard?: boolean;
  /** Extra environment for moat. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Reading stops (and the run is killed) beyond this many bytes. */
  byteLimit?: number;
}

export function moatOnPty(args: string[], options: PtyOptions): Promise<PtyRun> {
  const { home, columns = 100, timeoutMs = 90_000, byteLimit = 1024 * 1024 } = options;
  const quoted = [process.execPath, MOAT_MAIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`);
  const env: NodeJS.ProcessEnv = { ...moatEnv(home, options.env), TERM: 'xterm-256color' };
  delete env.CI; // CI gets plain output on purpose; these runs are about a person's terminal
  const child = spawn(
    'script',
    ['-qfec', `stty cols ${columns} rows 24; exec ${quoted.join(' ')}`, '/dev/null'],
    {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  // Without a keyboard the terminal's input is empty, as from /dev/null.
  if (!options.keyboard) child.stdin.end();
  const type = (keys: string): void => {
    child.stdin.write(keys);
  };
  let bytes = 0;
  let output = '';
  let timedOut = false;
  let notified = false;
  const kill = () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, timeoutMs);
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > byteLimit) return kill();
    output += chunk.toString();
    if (!notified && options.onOutput) notified = options.onOutput(output, type);
  });
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, bytes, timedOut });
    });
  });
}
