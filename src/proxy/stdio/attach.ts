/**
 * The attachment to one stdio MCP server: writes JSON-RPC lines to its stdin, reads lines from its
 * stdout, and re-attaches (bounded exponential backoff) when the pipes end while the server may
 * still run. Messages written while re-attaching wait in a bounded queue.
 */
import type { Logger } from 'pino';
import { errorMessage } from '../../util/errors.js';
import { LineSplitter } from './framing.js';
import { tryParseJsonRpc, type JsonRpcMessage } from '../../mcp/jsonrpc.js';
import type { StdioPipes } from '../../mcp/stdio.js';

export interface UpstreamOptions {
  connect(): Promise<StdioPipes>;
  logger: Logger;
  /** One message from the server, with the line it was parsed from. */
  onMessage(message: JsonRpcMessage, line: string): void;
  /** Called after a re-attach, before queued messages are written (the server may be a new process). */
  onReattached(): void;
  /** Called when the pipes ended, before re-attaching (what was written to them will not be answered if the process is gone). */
  onEnded?(): void;
  /** Called once when re-attaching failed for good; the upstream stays down. */
  onFailed(reason: string): void;
  /** First re-attach delay (default 250 ms), doubled per try up to `maxBackoffMs` (default 5 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Re-attach tries before giving up (default 10). */
  maxAttempts?: number;
  /** Messages held while re-attaching (default 1000); more are refused. */
  maxQueued?: number;
}

type State = 'attached' | 'reattaching' | 'failed' | 'closed';

export class StdioUpstream {
  #pipes?: StdioPipes;
  #state: State = 'reattaching';
  #queue: string[] = [];
  #retryTimer?: NodeJS.Timeout;
  /** A write went out in this event-loop turn; later ones wait for its end (see #write). */
  #batching = false;
  readonly #options: UpstreamOptions;
  readonly #log: Logger;

  constructor(options: UpstreamOptions) {
    this.#options = options;
    this.#log = options.logger;
  }

  /** Attaches for the first time; a failure here is the caller's to report. */
  async start(): Promise<void> {
    this.#attach(await this.#options.connect(), false);
  }

  get available(): boolean {
    return this.#state === 'attached' || this.#state === 'reattaching';
  }

  /** Writes one message; false when the server is gone for good or the re-attach queue is full. */
  send(message: JsonRpcMessage): boolean {
    const line = `${JSON.stringify(message)}\n`;
    if (this.#state === 'attached' && this.#pipes) {
      this.#write(this.#pipes, line);
      return true;
    }
    if (this.#state === 'reattaching' && this.#queue.length < (this.#options.maxQueued ?? 1000)) {
      this.#queue.push(line);
      return true;
    }
    return false;
  }

  /**
   * The first write of an event-loop turn goes out at once (a lone request waits for nothing);
   * the rest of that turn's writes go out together in one system call when the turn ends (many
   * sessions share one pipe).
   */
  #write(pipes: StdioPipes, line: string): void {
    const stdin = pipes.stdin;
    stdin.write(line);
    if (this.#batching) return;
    this.#batching = true;
    stdin.cork();
    setImmediate(() => {
      this.#batching = false;
      stdin.uncork();
    });
  }

  async close(): Promise<void> {
    this.#state = 'closed';
    clearTimeout(this.#retryTimer);
    this.#queue = [];
    this.#detach();
    await Promise.resolve();
  }

  #attach(pipes: StdioPipes, reattached: boolean): void {
    if (this.#state === 'closed') {
      pipes.close();
      return;
    }
    this.#pipes = pipes;
    this.#state = 'attached';
    // Unread, stderr would stall stdout when one connection carries both (a container attach);
    // a container's stderr is its log (`moat logs`), so the attachment only drains it.
    pipes.stderr?.resume();
    const splitter = new LineSplitter(
      (line) => this.#onLine(line),
      (bytes) => this.#log.warn({ bytes }, 'stdio server wrote an oversized line; dropped'),
    );
    const ended = () => this.#onPipesEnded(pipes);
    pipes.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
    pipes.stdout.once('end', ended);
    pipes.stdout.once('close', ended);
    pipes.stdout.on('error', (err) => {
      this.#log.warn({ err: errorMessage(err) }, 'stdio server stdout error');
      ended();
    });
    pipes.stdin.on('error', (err) => {
      this.#log.warn({ err: errorMessage(err) }, 'stdio server stdin error');
      ended();
    });
    if (reattached) this.#options.onReattached();
    for (const line of this.#queue.splice(0)) this.#write(pipes, line);
  }

  #onLine(line: string): void {
    const message = tryParseJsonRpc(line);
    if (message) this.#options.onMessage(message, line);
    else
      this.#log.warn(
        { line: line.slice(0, 200) },
        'stdio server wrote a line that is not a JSON-RPC message; dropped',
      );
  }

  #detach(): void {
    const pipes = this.#pipes;
    this.#pipes = undefined;
    if (!pipes) return;
    pipes.stdout.removeAllListeners('data');
    try {
      pipes.close();
    } catch (err) {
      this.#log.debug({ err: errorMessage(err) }, 'closing stdio pipes failed');
    }
  }

  #onPipesEnded(pipes: StdioPipes): void {
    if (this.#pipes !== pipes || this.#state !== 'attached') return;
    this.#detach();
    this.#state = 'reattaching';
    this.#log.warn('stdio server output ended; re-attaching');
    this.#options.onEnded?.();
    this.#retry(1);
  }

  #retry(attempt: number): void {
    const max = this.#options.maxAttempts ?? 10;
    if (attempt > max) {
      this.#state = 'failed';
      this.#queue = [];
      const reason = `the stdio MCP server could not be re-attached after ${max} tries`;
      this.#log.error(reason);
      this.#options.onFailed(reason);
      return;
    }
    const initial = this.#options.initialBackoffMs ?? 250;
    const delay = Math.min(initial * 2 ** (attempt - 1), this.#options.maxBackoffMs ?? 5000);
    this.#retryTimer = setTimeout(() => {
      this.#options.connect().then(
        (pipes) => this.#attach(pipes, true),
        (err: unknown) => {
          if (this.#state === 'closed') return;
          this.#log.warn({ attempt, err: errorMessage(err) }, 're-attaching to the stdio server failed');
          this.#retry(attempt + 1);
        },
      );
    }, delay);
  }
}
