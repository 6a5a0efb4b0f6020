/**
 * A de-duplicating, rate-limited work queue with its own workers (the shape of client-go's
 * workqueue). A key added while it waits is processed once; a key added while a worker holds it is
 * processed again after that worker finishes, so two workers never hold one key. A failed key comes
 * back after a per-key exponential backoff that resets on success.
 */

export interface HandleResult {
  /** Process the key again after this many ms, without counting it as a failure. */
  requeueAfter?: number;
}

export type Handler = (key: string) => Promise<HandleResult | void>;

export interface WorkQueueOptions {
  handle: Handler;
  workers?: number;
  /** First retry delay after a failure; doubles per consecutive failure of the key. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Told of every failure with the delay before the retry. */
  onFailure?: (key: string, err: unknown, retryInMs: number) => void;
}

export class WorkQueue {
  private readonly order: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly running = new Set<Promise<void>>();
  private readonly workers: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private paused = true;
  private closed = false;
  /** Retries scheduled after failures, for the metrics. */
  retries = 0;

  constructor(private readonly options: WorkQueueOptions) {
    this.workers = options.workers ?? 2;
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 5 * 60_000;
    if (!Number.isInteger(this.workers) || this.workers < 1) {
      throw new Error(`workers must be a whole number of at least 1, got ${this.workers}`);
    }
  }

  /** Keys waiting to be processed (not those a worker holds). */
  get depth(): number {
    return this.order.length;
  }

  add(key: string): void {
    if (this.closed || this.dirty.has(key)) return;
    this.dirty.add(key);
    // A key held by a worker goes back in line when that worker finishes.
    if (this.processing.has(key)) return;
    this.order.push(key);
    this.pump();
  }

  /** Adds `key` after `ms`; of several pending delays for one key, the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { at, timer });
  }

  /** The delay before the next retry of `key`: base·2ⁿ, capped. */
  backoffFor(key: string): number {
    const n = this.failures.get(key) ?? 0;
    return Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs);
  }

  /** Workers take keys from now on. */
  start(): void {
    if (this.closed) return;
    this.paused = false;
    this.pump();
  }

  /** Workers stop taking keys; resolves when the running ones finish or after `timeoutMs`. */
  async pause(timeoutMs: number): Promise<boolean> {
    this.paused = true;
    return this.waitForRunning(timeoutMs);
  }

  /**
   * Stops for good: no more keys are taken or delayed adds fired. Resolves true when the running
   * handlers finished within `timeoutMs`, false when the bound passed first.
   */
  async shutdown(timeoutMs: number): Promise<boolean> {
    this.closed = true;
    this.paused = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    return this.waitForRunning(timeoutMs);
  }

  private async waitForRunning(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const drained = (async () => {
      while (this.running.size > 0) await Promise.allSettled([...this.running]);
      return true as const;
    })();
    try {
      return await Promise.race([drained, bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  private pump(): void {
    while (!this.paused && this.running.size < this.workers && this.order.length > 0) {
      const key = this.order.shift()!;
      this.dirty.delete(key);
      this.processing.add(key);
      const run = this.process(key).finally(() => {
        this.running.delete(run);
        this.processing.delete(key);
        if (this.dirty.has(key)) this.order.push(key);
        this.pump();
      });
      this.running.add(run);
    }
  }

  private async process(key: string): Promise<void> {
    try {
      const result = await this.options.handle(key);
      this.failures.delete(key);
      if (result?.requeueAfter !== undefined) this.addAfter(key, result.requeueAfter);
    } catch (err) {
      const delay = this.backoffFor(key);
      this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
      this.retries++;
      this.options.onFailure?.(key, err, delay);
      this.addAfter(key, delay);
    }
  }
}
