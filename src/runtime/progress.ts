/**
 * Shows image preparation to a person: a one-line spinner on a terminal (per-layer status, or the
 * current build step and its latest output line, in its text), plain lines otherwise (`Pulling
 * <image>...` or each build step, then the outcome), so logs stay readable. A build step's own
 * output is only shown on a terminal; when the step fails, the error carries its last lines.
 */
import { LineSpinner } from './line-spinner.js';
import type { BuildProgress, PullProgress } from './types.js';

export interface ProgressDisplay {
  onProgress(progress: PullProgress | BuildProgress): void;
  /** Ends the display after a failure (stops a spinner; the caller reports the error). */
  fail(): void;
}

type Stream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** Narrower than this (or a width the terminal does not report) gets plain lines. */
const MIN_SPINNER_COLUMNS = 20;

export function imageProgressDisplay(stream: Stream, env: NodeJS.ProcessEnv = process.env): ProgressDisplay {
  const interactive =
    stream.isTTY === true && !env.CI && env.TERM !== 'dumb' && (stream.columns ?? 0) >= MIN_SPINNER_COLUMNS;
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
  const spinner = new LineSpinner(stream, !env.NO_COLOR);
  let step = '';
  return {
    onProgress({ phase, message }) {
      if (phase === 'step') step = message;
      const text = phase === 'output' ? `${step}\n${message.trim()}` : message;
      if (phase === 'done') spinner.succeed(message);
      else if (spinner.isSpinning) spinner.text = text;
      else spinner.start(text);
    },
    fail() {
      if (spinner.isSpinning) spinner.stop();
    },
  };
}
