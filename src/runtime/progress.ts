/**
 * Shows image preparation to a person: an ora spinner on a TTY (per-layer status or the current
 * build step in its text), plain lines otherwise (`Pulling <image>...` or each build step, then
 * the outcome), so logs stay readable. A build step's own output is only shown on a TTY; when the
 * step fails, the error carries its last lines.
 */
import ora from 'ora';
import type { BuildProgress, PullProgress } from './types.js';

export interface ProgressDisplay {
  onProgress(progress: PullProgress | BuildProgress): void;
  /** Ends the display after a failure (stops a spinner; the caller reports the error). */
  fail(): void;
}

type Stream = NodeJS.WritableStream & { isTTY?: boolean };

export function imageProgressDisplay(stream: Stream, env: NodeJS.ProcessEnv = process.env): ProgressDisplay {
  const interactive = stream.isTTY === true && !env.CI && env.TERM !== 'dumb';
  if (!interactive) {
    let announced = false;
    return {
      onProgress({ phase, image, message }) {
        if (phase === 'pull' && !announced) {
          announced = true;
          stream.write(`Pulling ${image}...\n`);
        } else if (phase === 'done' || phase === 'step') stream.write(`${message}\n`);
      },
      fail() {},
    };
  }
  const spinner = ora({ stream, isEnabled: true, discardStdin: false, color: env.NO_COLOR ? false : 'cyan' });
  const width = Math.max(40, ((stream as { columns?: number }).columns ?? 100) - 4);
  const fit = (text: string): string => (text.length > width ? `${text.slice(0, width - 1)}…` : text);
  let step = '';
  return {
    onProgress({ phase, message }) {
      if (phase === 'step') step = fit(message);
      const text = phase === 'output' ? `${step}\n  ${fit(message.trim())}` : fit(message);
      if (phase === 'done') spinner.succeed(message);
      else if (spinner.isSpinning) spinner.text = text;
      else spinner.start(text);
    },
    fail() {
      if (spinner.isSpinning) spinner.stop();
    },
  };
}
