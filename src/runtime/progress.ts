/**
 * Shows image preparation to a person: a one-line spinner on a terminal (per-layer status in its
 * text), plain lines otherwise (`Pulling <image>...`, then the outcome), so logs stay readable.
 */
import { LineSpinner } from './line-spinner.js';
import type { PullProgress } from './types.js';

export interface ProgressDisplay {
  onProgress(progress: PullProgress): void;
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
        } else if (phase === 'done') stream.write(`${message}\n`);
      },
      fail() {},
    };
  }
  const spinner = new LineSpinner(stream, !env.NO_COLOR);
  return {
    onProgress({ phase, message }) {
      if (phase === 'done') spinner.succeed(message);
      else if (spinner.isSpinning) spinner.text = message;
      else spinner.start(message);
    },
    fail() {
      if (spinner.isSpinning) spinner.stop();
    },
  };
}
