/**
 * Reads the progress answer of `POST /build` (newline-delimited JSON; the same shape from Docker
 * and Podman): `{"stream": text}` output, `{"error": …}` on failure (inside a 200 answer).
 * Keeps the current Containerfile step and its last output lines, so a failure can say where it
 * failed and what the step printed.
 */
import type { BuildProgress } from '../types.js';

/** `Step 3/9 : RUN …` (Docker), `STEP 3/9: RUN …` or `[1/2] STEP 3/9: RUN …` (Podman). */
const STEP = /^(?:\[\d+\/\d+\] )?(?:Step|STEP) \d+\/\d+ ?: /;
/** Lines Docker prints between steps that say nothing to a person. */
const NOISE =
  /^(---> |Removing intermediate container |Successfully (built|tagged) |--> |COMMIT |Getting image source signatures|Copying (blob|config) |Writing manifest |Storing signatures)/;
const TAIL_LINES = 20;

export class BuildStreamReader {
  private pending = '';
  private text = '';
  step: string | undefined;
  /** Output of the current step (last lines). */
  readonly tail: string[] = [];
  failure: string | undefined;

  constructor(
    private readonly image: string,
    private readonly report: (progress: BuildProgress) => void,
  ) {}

  /** Feeds a chunk of the HTTP answer. */
  push(chunk: string): void {
    this.pending += chunk;
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, newline).trim();
      this.pending = this.pending.slice(newline + 1);
      if (line) this.event(line);
    }
  }

  /** Call at the end of the answer. */
  end(): void {
    if (this.pending.trim()) this.event(this.pending.trim());
    this.pending = '';
    if (this.text) this.line(this.text);
    this.text = '';
  }

  private event(json: string): void {
    let event: { stream?: unknown; error?: unknown; errorDetail?: { message?: unknown } };
    try {
      event = JSON.parse(json) as typeof event;
    } catch {
      return;
    }
    if (typeof event.stream === 'string') this.output(event.stream);
    const error = typeof event.error === 'string' ? event.error : event.errorDetail?.message;
    if (typeof error === 'string' && error.trim()) this.failure = error.trim();
  }

  private output(text: string): void {
    this.text += text;
    let newline: number;
    while ((newline = this.text.indexOf('\n')) >= 0) {
      this.line(this.text.slice(0, newline));
      this.text = this.text.slice(newline + 1);
    }
  }

  private line(raw: string): void {
    // eslint-disable-next-line no-control-regex -- terminal colour codes from the build output
    const line = raw.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').trimEnd();
    if (!line.trim()) return;
    if (STEP.test(line)) {
      this.step = line;
      this.tail.length = 0;
      this.report({ phase: 'step', image: this.image, message: line });
      return;
    }
    if (NOISE.test(line.trim())) return;
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.report({ phase: 'output', image: this.image, message: line });
  }

  /** The failure as one message: what failed, where, and the step's last lines. */
  failureMessage(): string {
    const where = this.step ? ` at ${this.step}` : '';
    const tail = this.tail.length > 0 ? `\nLast lines of the step:\n  ${this.tail.join('\n  ')}` : '';
    return `building ${this.image} failed${where}: ${this.reason()}${tail}`;
  }

  /** Podman repeats the whole step in its error (`building at STEP "…": cause`): keep the cause. */
  private reason(): string {
    const failure = this.failure ?? 'the engine ended the build without an image';
    return failure.startsWith('building at STEP "') && failure.includes('": ')
      ? failure.slice(failure.lastIndexOf('": ') + 3)
      : failure;
  }
}
