/**
 * A one-line spinner for a terminal: redraws its line in place (`\r`, then erase to the end of
 * the line), cut to the terminal's width. ora counted wrapped lines by dividing by the width, so
 * a terminal reporting 0 columns made it loop forever writing cursor codes; this never divides.
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 80;
const ERASE_LINE = '\r\u001b[K';

type TerminalStream = NodeJS.WritableStream & { columns?: number };

export class LineSpinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private current = '';

  constructor(
    private readonly stream: TerminalStream,
    private readonly color: boolean,
  ) {}

  get isSpinning(): boolean {
    return this.timer !== undefined;
  }

  set text(value: string) {
    this.current = value.replace(/\s*\n\s*/g, ' · ');
  }

  start(text: string): void {
    this.text = text;
    this.timer ??= setInterval(() => this.render(), FRAME_MS);
    this.render();
  }

  /** Ends with a final line (a check mark and the outcome). */
  succeed(message: string): void {
    this.stop();
    this.stream.write(`${this.color ? '\u001b[32m✔\u001b[39m' : '✔'} ${message}\n`);
  }

  /** Clears the spinner's line. */
  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.stream.write(ERASE_LINE);
  }

  private render(): void {
    const symbol = FRAMES[this.frame++ % FRAMES.length] ?? '';
    const text = fitWidth(this.current, (this.stream.columns ?? 0) - 2);
    this.stream.write(`${ERASE_LINE}${this.color ? `\u001b[36m${symbol}\u001b[39m` : symbol} ${text}`);
  }
}

/** The text cut to `width` characters (with an ellipsis); unchanged when the width is unknown. */
export function fitWidth(text: string, width: number): string {
  if (width <= 0 || text.length <= width) return text;
  return `${text.slice(0, Math.max(width - 1, 0))}…`;
}
